package io.warden.client;

/**
 * When a term of an {@link Election} lasts: the one rule an election is built with. The contract is
 * {@link #CONTRACT}: exactly while the term's hold is {@linkplain Hold#isValid() valid}. The SDK has no way to build
 * an election with another; the proof suite's tests build one that breaks it, to show that the election checker
 * catches a leadership that outlives its hold.
 *
 * <p>Thread-safety: implementations are called from any thread and must be stateless.
 */
@FunctionalInterface
interface TermRules {
    /** The contract: a term lasts exactly while its hold is valid (released, lost or past the local deadline: over). */
    TermRules CONTRACT = Hold::isValid;

    /** Whether the term over {@code hold} still lasts, at this instant. */
    boolean lasts(Hold hold);
}
