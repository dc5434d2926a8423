package io.warden.it.support;

import java.util.ArrayList;
import java.util.List;

/**
 * A storage resource that protects itself with fencing tokens, as contract §2.2 asks of resources
 * ({@code UPDATE ... WHERE fence < :token}).
 *
 * <p>A write carries a token and the identity of the grant it is made under ({@code holder}). It is accepted only if
 * its token is at least the highest token seen; the first write of a new holder needs a strictly greater token. Every
 * refused write is recorded as a violation: a client that believed it held the lock wrote with a token that a later
 * grant had already superseded (or two holders shared a token).
 *
 * <p>Concurrency: all state guarded by {@code this}.
 */
public final class FencedResource {
    // Guarded by this.
    private long highestToken;
    private String lastHolder;
    private long accepted;
    private final List<String> violations = new ArrayList<>();
    private final List<Long> acceptedTokens = new ArrayList<>();

    /** Returns true if the write is accepted. */
    public synchronized boolean write(long token, String holder) {
        boolean sameHolder = holder.equals(lastHolder);
        boolean ok = token > highestToken || (token == highestToken && sameHolder);
        if (!ok) {
            violations.add("write by " + holder + " with token " + token + " refused: highest " + highestToken
                    + " by " + lastHolder);
            return false;
        }
        if (!sameHolder) {
            acceptedTokens.add(token);
        }
        highestToken = token;
        lastHolder = holder;
        accepted++;
        return true;
    }

    public synchronized long highestToken() {
        return highestToken;
    }

    public synchronized long acceptedWrites() {
        return accepted;
    }

    public synchronized List<String> violations() {
        return List.copyOf(violations);
    }

    /** The token of each holder's first accepted write, in order: strictly increasing by construction. */
    public synchronized List<Long> holderTokens() {
        return List.copyOf(acceptedTokens);
    }
}
