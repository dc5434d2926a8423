package io.warden.service;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Deliberate bugs, for the proof suite only (a checker that nobody has seen fail proves nothing). Off unless the JVM is
 * started with {@code -Dwarden.test.fault=NAME}; no setting, flag or environment variable turns one on, and a gateway
 * that has one says so in a warning at start ({@link #warnIfActive}).
 *
 * <ul>
 *   <li>{@link #GRANT_WITHOUT_CHECK}: every request is granted as soon as its queue node exists, holders or not
 *   (breaks contract §2.1; the mutex checker must see two holders).</li>
 *   <li>{@link #EXPIRE_AT_HALF_TTL}: a tracked session's deadline is half its TTL after its last keepalive (breaks
 *   §2.3; the expiry checker must see an early expiry).</li>
 *   <li>{@link #TOKEN_OF_LOCK}: a grant's token is the lock node's zxid instead of its queue node's, so holders one
 *   after another share a token while the lock node lives (breaks §2.2, fencing; a release by that token finds the
 *   session's own node on the lock). The fenced counter's checker must see a lost increment: a holder whose session
 *   expired under it writes with a token its successor's reads did not supersede.</li>
 *   <li>{@link #WAITERS_NEVER_WOKEN}: a queued call is not woken when the node it waits for goes; it looks again only
 *   when its wait runs out (breaks §2.4, release promotes waiters; the liveness checker must see a client that does not
 *   acquire within its bound).</li>
 *   <li>{@link #RESUME_FROM_NOW}: a watch resumed with {@code since_revision} gets neither the events it missed nor a
 *   RESYNC, only what happens from now on (breaks §3's resume; the watch checker must see a grant it never got).</li>
 * </ul>
 *
 * <p>Concurrency: immutable; {@link #ACTIVE} is read once, when the class loads.
 */
public enum TestFault {
    NONE, GRANT_WITHOUT_CHECK, EXPIRE_AT_HALF_TTL, TOKEN_OF_LOCK, WAITERS_NEVER_WOKEN, RESUME_FROM_NOW;

    public static final String PROPERTY = "warden.test.fault";
    /** The fault this JVM runs with: {@link #NONE} unless the system property names another. */
    public static final TestFault ACTIVE = parse(System.getProperty(PROPERTY));

    private static final Logger log = LoggerFactory.getLogger(TestFault.class);

    static TestFault parse(String value) {
        if (value == null || value.isBlank()) {
            return NONE;
        }
        return valueOf(value.trim());
    }

    public static boolean active(TestFault fault) {
        return ACTIVE == fault;
    }

    /** Called at gateway start: a gateway with a deliberate bug must never pass for a healthy one in a log. */
    public static void warnIfActive(String gatewayId) {
        if (ACTIVE != NONE) {
            log.warn("gateway {} RUNS WITH THE DELIBERATE BUG {} (-D{}): for the proof suite's own tests only; it "
                    + "breaks the contract on purpose", gatewayId, ACTIVE, PROPERTY);
        }
    }
}
