package io.warden.console;

import io.warden.console.view.InvalidInput;

/**
 * A console request that ends in an error page: thrown by handlers, rendered by {@link Pages#fail}.
 *
 * <p>Concurrency: immutable.
 *
 * @see InvalidInput for a bad parameter (rendered as 400)
 */
final class ConsoleError extends RuntimeException {
    private final int status;
    private final String title;
    private final String hint;

    ConsoleError(int status, String title, String message, String hint) {
        super(message);
        this.status = status;
        this.title = title;
        this.hint = hint;
    }

    static ConsoleError badRequest(InvalidInput e) {
        return new ConsoleError(400, "Bad request", e.getMessage(), null);
    }

    static ConsoleError forbidden(String message) {
        return new ConsoleError(403, "Forbidden", message, null);
    }

    static ConsoleError notFound(String message) {
        return new ConsoleError(404, "Not found", message, null);
    }

    int status() {
        return status;
    }

    String title() {
        return title;
    }

    String hint() {
        return hint;
    }
}
