package io.warden.service.queue;

import io.warden.service.api.Mode;

import java.util.Optional;

/**
 * One child of a lock node, named as Curator's {@code InterProcessReadWriteLock} names its nodes:
 * {@code _c_{id}-__WRIT__{seq}} (EXCLUSIVE) or {@code _c_{id}-__READ__{seq}} (SHARED). Warden derives
 * {@code id} from (session, request id); Curator uses a random UUID.
 *
 * @param node     the child's name
 * @param sequence the ZooKeeper sequence number: the queue order
 * @param id       the protection id between {@code _c_} and {@code -}, or null when the name has none
 */
public record QueueEntry(String node, long sequence, Mode mode, String id) {
    static final String WRITE_MARK = "__WRIT__";
    static final String READ_MARK = "__READ__";
    static final String PROTECTED_PREFIX = "_c_";

    /** The child node's name prefix (before ZooKeeper appends the sequence) for a request. */
    public static String prefix(String id, Mode mode) {
        return PROTECTED_PREFIX + id + "-" + (mode == Mode.EXCLUSIVE ? WRITE_MARK : READ_MARK);
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
        return Optional.of(new QueueEntry(node, sequence, mark == write ? Mode.EXCLUSIVE : Mode.SHARED, id));
    }
}
