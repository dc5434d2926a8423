package io.warden.console.view;

import io.warden.console.model.CellInfo;
import java.util.List;

/**
 * The namespace page.
 *
 * <p>Concurrency: an immutable value; safe to share between threads.
 *
 * @param namespaces every namespace with live locks, for the empty state and the namespace switcher
 * @param cell       the cell that serves the namespace, or null when the gateway's cells could not be read
 * @param cellUnread whether that cell's locks could not be read now: the listing is empty for that, not because the
 *                   namespace is free
 */
public record NamespaceView(LockListing listing, List<String> namespaces, CellInfo cell, boolean cellUnread) {
    public NamespaceView {
        namespaces = List.copyOf(namespaces);
    }

    /** A namespace page whose cell's locks were read. */
    public NamespaceView(LockListing listing, List<String> namespaces, CellInfo cell) {
        this(listing, namespaces, cell, false);
    }

    /** A namespace page that does not know the namespace's cell. */
    public NamespaceView(LockListing listing, List<String> namespaces) {
        this(listing, namespaces, null);
    }
}
