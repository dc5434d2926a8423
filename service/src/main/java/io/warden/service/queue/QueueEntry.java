package io.warden.service.queue;

import io.warden.service.api.Mode;

import java.util.Optional;

/**
 * One child of a lock node, named as Curator's {@code InterProcessReadWriteLock} names its nodes:
 * {@code _c_{id}-__WRIT__{seq}} (EXCLUSIVE) or {@code _c_{id}-__READ__{seq}} (SHARED). Warden derives
 * {@code id} from (session, request id); Curator uses a random UUID. A semaphore entry is
 * {@code _c_{id}-sem{permits}-__WRIT__{seq}}: Curator's read-write lock takes it for a writer (it looks only for the
 * marks and sorts by what follows them), so a plain Curator client and Warden's semaphore holders exclude each other.
 *
 * @param node     the child's name
 * @param sequence the ZooKeeper sequence number: the queue order
 * @param id       the protection id between {@code _c_} and {@code -} (without the semaphore segment), or null when the
 *                 name has none
 * @param permits  a SEMAPHORE entry's permits ({@link #MIN_PERMITS} to {@link #MAX_PERMITS}); 0 for any other mode
 */
public record QueueEntry(String node, long sequence, Mode mode, String id, int permits) {
    static final String WRITE_MARK = "__WRIT__";
    static final String READ_MARK = "__READ__";
    static final String PROTECTED_PREFIX = "_c_";
    static final String SEMAPHORE_MARK = "-sem";
    /** The fewest permits a semaphore may have (one permit is an EXCLUSIVE lock). */
    public static final int MIN_PERMITS = io.warden.service.api.AcquireRequest.MIN_PERMITS;
    /** The most permits a semaphore may have. */
    public static final int MAX_PERMITS = io.warden.service.api.AcquireRequest.MAX_PERMITS;

    public QueueEntry {
        if ((mode == Mode.SEMAPHORE) != (permits != 0)) {
            throw new IllegalArgumentException("permits " + permits + " with mode " + mode);
        }
    }

    /** An entry of a lock (EXCLUSIVE or SHARED). */
    public QueueEntry(String node, long sequence, Mode mode, String id) {
        this(node, sequence, mode, id, 0);
    }

    /** The child node's name prefix (before ZooKeeper appends the sequence) for a lock request. */
    public static String prefix(String id, Mode mode) {
        if (mode == Mode.SEMAPHORE) {
            throw new IllegalArgumentException("a semaphore entry's prefix needs its permits");
        }
        return PROTECTED_PREFIX + id + "-" + (mode == Mode.EXCLUSIVE ? WRITE_MARK : READ_MARK);
    }

    /** The child node's name prefix for a request of {@code mode}; {@code permits} only for SEMAPHORE (else 0). */
    public static String prefix(String id, Mode mode, int permits) {
        if (mode != Mode.SEMAPHORE) {
            return prefix(id, mode);
        }
        if (permits < MIN_PERMITS || permits > MAX_PERMITS) {
            throw new IllegalArgumentException("permits must be between " + MIN_PERMITS + " and " + MAX_PERMITS
                    + ", got " + permits);
        }
        return PROTECTED_PREFIX + id + SEMAPHORE_MARK + permits + "-" + WRITE_MARK;
    }

    /** Whether this entry and {@code other} are of one kind: both locks (EXCLUSIVE or SHARED), or semaphores of equal permits. */
    public boolean agreesWith(QueueEntry other) {
        return permits == other.permits;
    }

    /** Parses a child name; empty for children that are not queue entries (such as a longer lock's path segment). */
    public static Optional<QueueEntry> parse(String node) {
        int write = node.lastIndexOf(WRITE_MARK);
        int read = node.lastIndexOf(READ_MARK);
        int mark = Math.max(write, read);
        if (mark < 0) {
            return Optional.empty();
        }
        String digits = node.substring(mark + WRITE_MARK.length());
        if (digits.isEmpty() || digits.length() > 11) {
            return Optional.empty();
        }
        long sequence;
        try {
            sequence = Long.parseLong(digits);
        } catch (NumberFormatException e) {
            return Optional.empty();
        }
        String id = null;
        if (node.startsWith(PROTECTED_PREFIX) && mark > PROTECTED_PREFIX.length() && node.charAt(mark - 1) == '-') {
            id = node.substring(PROTECTED_PREFIX.length(), mark - 1);
        }
        if (mark == write && id != null) {
            int sem = id.lastIndexOf(SEMAPHORE_MARK);
            int permits = sem < 0 ? -1 : permits(id.substring(sem + SEMAPHORE_MARK.length()));
            if (permits > 0) {
                return Optional.of(new QueueEntry(node, sequence, Mode.SEMAPHORE, id.substring(0, sem), permits));
            }
        }
        return Optional.of(new QueueEntry(node, sequence, mark == write ? Mode.EXCLUSIVE : Mode.SHARED, id));
    }

    /** The permits a semaphore segment names, or -1 when it is not one (digits only, no leading zero, in range). */
    private static int permits(String digits) {
        if (digits.isEmpty() || digits.length() > 4 || digits.charAt(0) == '0') {
            return -1;
        }
        for (int i = 0; i < digits.length(); i++) {
            if (digits.charAt(i) < '0' || digits.charAt(i) > '9') {
                return -1;
            }
        }
        int n = Integer.parseInt(digits);
        return n >= MIN_PERMITS && n <= MAX_PERMITS ? n : -1;
    }
}
