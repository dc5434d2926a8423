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
 *
 * <p>Left to itself, Jetty answers a request line without a path or with an unknown version 505, and writes no body at
 * all for methods other than GET, POST and HEAD ({@code OPTIONS *}). Here bad input is always a 4xx: 501 and 505 (what
 * Jetty's parser says of a request it cannot parse) become 400, as does {@code *} as a target (this API has no
 * server-wide OPTIONS); every method gets the document; and an error about the request line, the path, Content-Length
 * or Transfer-Encoding names it in {@code field}.
 */
final class JettyProblemHandler extends ErrorHandler {
    private final Problems problems;
    private final Json json;

    JettyProblemHandler(Problems problems, Json json) {
        this.problems = problems;
        this.json = json;
    }

    /** Every method gets a document (Jetty's default: only GET, POST and HEAD; the rest an empty body). */
    @Override
    public boolean errorPageForMethod(String method) {
        return true;
    }

    @Override
    protected void generateResponse(Request request, Response response, int code, String message, Throwable cause,
                                    Callback callback) {
        String path = request.getHttpURI().getPath();
        int status = code == 501 || code == 505 || (code == 404 && "*".equals(path)) ? 400 : code;
        if (status != code) {
            response.setStatus(status);
        }
        String field = status == 400 ? fieldOf(code, message, path) : null;
        String detail = code == 404 && "*".equals(path) ? "'*' is not a path; this API has no server-wide OPTIONS"
                : message == null || message.isBlank() ? "the request was rejected by the HTTP server" : message;
        ObjectNode doc = document(status, field == null ? detail : field + ": " + detail, request.getMethod() + " " + path);
        if (field != null) {
            doc.put("field", field);
        }
        byte[] body = json.write(doc);
        response.getHeaders().put(HttpHeader.CONTENT_TYPE, Problems.CONTENT_TYPE);
        response.getHeaders().put(HttpHeader.CONTENT_LENGTH, body.length);
        response.write(true, ByteBuffer.wrap(body), callback);
    }

    private ObjectNode document(int status, String message, String request) {
        String detail = message == null || message.isBlank() ? "the request was rejected by the HTTP server" : message;
        return problems.document(new ProblemException(status, codeOf(status), detail), request);
    }

    /**
     * What a 400 from Jetty is about, from its status and message (Jetty 12.1's wording: "Invalid Content-Length
     * Value", "Multiple Content-Lengths", "Transfer-Encoding and Content-Length", "Bad UTF-8 encoding", "Unknown
     * Version", "HTTP/0.9 not supported"); null when none of these.
     */
    private static String fieldOf(int code, String message, String path) {
        String m = message == null ? "" : message.toLowerCase(Locale.ROOT);
        if (code == 505 || m.contains("version")) {
            return "request_line";
        }
        if (m.contains("transfer-encoding") || m.contains("chunk")) {
            return "Transfer-Encoding";
        }
        if (m.contains("content-length")) {
            return "Content-Length";
        }
        if ("*".equals(path) || m.contains("uri") || m.contains("utf") || m.contains("path") || m.contains("encoding")) {
            return "path";
        }
        return null;
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
