package io.warden.console.view;

/**
 * A request parameter the console cannot use; the console answers 400 with a page naming {@link #field()}.
 *
 * <p>Concurrency: an immutable value; safe to share between threads.
 */
public final class InvalidInput extends RuntimeException {
    private final String field;

    public InvalidInput(String field, String problem) {
        super(field + " " + problem);
        this.field = field;
    }

    /** The offending parameter, e.g. {@code limit}. */
    public String field() {
        return field;
    }
}
