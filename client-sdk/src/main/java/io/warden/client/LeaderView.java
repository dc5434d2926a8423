package io.warden.client;

import java.util.Optional;

/**
 * The leader of one election as a watch of its lock reports it: the EXCLUSIVE holder of the name. A GRANTED event
 * (EXCLUSIVE) names the new leader; the RELEASED or EXPIRED event of its token ends it; a RESYNC gives the holder
 * outright. Events of other names, SHARED grants and queue changes do not move it.
 *
 * <p>Concurrency: {@link #apply} is called by the watch's one thread; {@code leader} is volatile, read from anywhere.
 */
final class LeaderView {
    private final String name;
    private volatile Leader leader;

    LeaderView(String name) {
        this.name = name;
    }

    Optional<Leader> leader() {
        return Optional.ofNullable(leader);
    }

    void apply(LockEvent e) {
        switch (e.type()) {
            case RESYNC -> {
                Leader now = null;
                for (LockState lock : e.locks()) {
                    if (name.equals(lock.name())) {
                        for (LockState.Holder h : lock.holders()) {
                            if (h.mode() == LockMode.EXCLUSIVE && h.token() > 0) {
                                now = new Leader(h.sessionId(), h.clientId(), h.token(), e.revision());
                            }
                        }
                    }
                }
                leader = now;
            }
            case GRANTED -> {
                if (name.equals(e.name()) && e.mode() == LockMode.EXCLUSIVE && e.token() != null && e.token() > 0) {
                    leader = new Leader(e.sessionId(), e.clientId(), e.token(), e.revision());
                }
            }
            case RELEASED, EXPIRED -> {
                Leader current = leader;
                if (current != null && name.equals(e.name()) && e.token() != null && e.token() == current.token()) {
                    leader = null;
                }
            }
            default -> {
                // QUEUED, CANCELLED: candidates come and go; the leader stays
            }
        }
    }
}
