package io.warden.service.http;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.ByteBuffer;
import java.util.Locale;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpStatus;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.handler.ErrorHandler;
import org.eclipse.jetty.util.Callback;

/**
 * Jetty's own error answers (a request it rejects before Javalin sees it: a malformed URI, headers too
 * large, ...) as problem documents instead of HTML pages, so a client always gets
 * {@code application/problem+json}. The document comes from {@link Problems}, like every other.
 */
final class JettyProblemHandler extends ErrorHandler {
    private final Problems problems;
    private final Json json;

    JettyProblemHandler(Problems problems, Json json) {
        this.problems = problems;
        this.json = json;
    }

    @Override
    protected void generateResponse(Request request, Response response, int code, String message, Throwable cause,
                                    Callback callback) {
        byte[] body = json.write(document(code, message, request.getMethod() + " " + request.getHttpURI().getPath()));
        response.getHeaders().put(HttpHeader.CONTENT_TYPE, Problems.CONTENT_TYPE);
        response.getHeaders().put(HttpHeader.CONTENT_LENGTH, body.length);
        response.write(true, ByteBuffer.wrap(body), callback);
    }

    private ObjectNode document(int status, String message, String request) {
        String detail = message == null || message.isBlank() ? "the request was rejected by the HTTP server" : message;
        return problems.document(new ProblemException(status, codeOf(status), detail), request);
    }

    /** Our codes where one fits; otherwise the HTTP reason in code style, e.g. 431 REQUEST_HEADER_FIELDS_TOO_LARGE. */
    private static String codeOf(int status) {
        return switch (status) {
            case 400 -> "INVALID_ARGUMENT";
            case 404 -> "NOT_FOUND";
            case 405 -> "METHOD_NOT_ALLOWED";
            case 413 -> "PAYLOAD_TOO_LARGE";
            case 500 -> "INTERNAL";
            case 503 -> "UNAVAILABLE";
            default -> HttpStatus.getMessage(status).toUpperCase(Locale.ROOT).replaceAll("[^A-Z0-9]+", "_");
        };
    }
}
