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
 */
public record NamespaceView(LockListing listing, List<String> namespaces, CellInfo cell) {
    public NamespaceView {
        namespaces = List.copyOf(namespaces);
    }

    /** A namespace page that does not know the namespace's cell. */
    public NamespaceView(LockListing listing, List<String> namespaces) {
        this(listing, namespaces, null);
    }

    /**
     * Whether the console's listing is not where the namespace's locks are: the console reads the default cell only,
     * and this namespace is routed to another.
     */
    public boolean elsewhere() {
        return cell != null && !cell.isDefault();
    }
}
