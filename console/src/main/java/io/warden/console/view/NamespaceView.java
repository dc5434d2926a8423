package io.warden.console.view;

import java.util.List;

/**
 * The namespace page.
 *
 * <p>Concurrency: an immutable value; safe to share between threads.
 *
 * @param namespaces every namespace with live locks, for the empty state and the namespace switcher
 */
public record NamespaceView(LockListing listing, List<String> namespaces) {
    public NamespaceView {
        namespaces = List.copyOf(namespaces);
    }
}
