package io.warden.client;

import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.net.ProtocolException;
import java.net.URI;
import java.nio.charset.StandardCharsets;

/**
 * HTTP/1.1 framing for {@link Http1Client}: the bytes of a request, and a response read from a socket's stream
 * (RFC 9112: a status line, header fields, a body framed by {@code Content-Length}, {@code chunked} or the end of the
 * connection). Only what the gateways' API needs: no pipelining, no trailers kept, no compression, no redirects.
 *
 * <p>Concurrency: the static methods are pure; an {@link Input} belongs to the one thread that reads its socket.
 */
final class Http1Wire {
    /** The longest status or header line accepted. */
    static final int MAX_LINE = 8 * 1024;
    /** The most header lines accepted in one response. */
    static final int MAX_HEADERS = 100;
    /** The largest body read into memory (the API's answers are a few hundred bytes; listings are paged). */
    static final int MAX_BODY = 16 * 1024 * 1024;

    private Http1Wire() {
    }

    /** Where a base URL ({@code http(s)://host[:port][/prefix]}) points: the socket's address and the request line's prefix. */
    record Endpoint(boolean tls, String host, int port, String hostHeader, String pathPrefix) {
        static Endpoint of(String base) {
            URI uri = URI.create(base);
            boolean tls = "https".equalsIgnoreCase(uri.getScheme());
            if (!tls && !"http".equalsIgnoreCase(uri.getScheme())) {
                throw new IllegalArgumentException("not an http(s) URL: " + base);
            }
            String host = uri.getHost();
            if (host == null) {
                throw new IllegalArgumentException("no host in " + base);
            }
            int port = uri.getPort() >= 0 ? uri.getPort() : tls ? 443 : 80;
            String hostHeader = uri.getPort() >= 0 ? host + ":" + uri.getPort() : host;
            String literal = host.startsWith("[") && host.endsWith("]") ? host.substring(1, host.length() - 1) : host;
            String prefix = uri.getRawPath() == null ? "" : uri.getRawPath().replaceAll("/+$", "");
            return new Endpoint(tls, literal, port, hostHeader, prefix);
        }
    }

    /**
     * The bytes of one request: request line, {@code Host}, the given header fields (name, value, name, value, ...)
     * and {@code Content-Length} when there is a body. {@code target} is the path and query below the endpoint's
     * prefix; characters outside printable ASCII are percent-encoded as UTF-8, as {@link URI#toASCIIString()} does.
     *
     * @throws IllegalArgumentException for a header with a line break or a control character
     */
    static byte[] request(Endpoint endpoint, String method, String target, String[] headers, byte[] body) {
        StringBuilder head = new StringBuilder(160 + target.length());
        head.append(method).append(' ');
        appendTarget(head, endpoint.pathPrefix());
        appendTarget(head, target);
        head.append(" HTTP/1.1\r\nHost: ").append(endpoint.hostHeader()).append("\r\n");
        for (int i = 0; i + 1 < headers.length; i += 2) {
            checkField(headers[i]);
            checkField(headers[i + 1]);
            head.append(headers[i]).append(": ").append(headers[i + 1]).append("\r\n");
        }
        if (body != null) {
            head.append("Content-Length: ").append(body.length).append("\r\n");
        }
        head.append("\r\n");
        int headLength = head.length();
        byte[] bytes = new byte[headLength + (body == null ? 0 : body.length)];
        for (int i = 0; i < headLength; i++) {
            bytes[i] = (byte) head.charAt(i); // ASCII: checked above, encoded below
        }
        if (body != null) {
            System.arraycopy(body, 0, bytes, headLength, body.length);
        }
        return bytes;
    }

    private static void appendTarget(StringBuilder out, String target) {
        for (int i = 0; i < target.length(); i++) {
            char c = target.charAt(i);
            if (c > 0x20 && c < 0x7f) {
                out.append(c);
            } else {
                int end = Character.isHighSurrogate(c) && i + 1 < target.length() ? i + 2 : i + 1;
                for (byte b : target.substring(i, end).getBytes(StandardCharsets.UTF_8)) {
                    out.append('%').append(Character.toUpperCase(Character.forDigit((b >> 4) & 0xf, 16)))
                            .append(Character.toUpperCase(Character.forDigit(b & 0xf, 16)));
                }
                i = end - 1;
            }
        }
    }

    private static void checkField(String s) {
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if ((c < 0x20 && c != '\t') || c >= 0x7f) {
                throw new IllegalArgumentException("a header field may hold printable ASCII only: '" + s + "'");
            }
        }
    }

    /**
     * A response's status and how its body is framed. {@code length}: -1 when not given. {@code captured}: the value of
     * the header field asked for ({@link #readHead(Input, String)}), or null.
     */
    record Head(int status, long length, boolean chunked, boolean close, String captured) {
        /** Whether a body follows (RFC 9112 §6.3: never after 1xx, 204, 304). */
        boolean hasBody() {
            return status >= 200 && status != 204 && status != 304;
        }

        /** Whether the connection can carry another request after this response's body. */
        boolean keepAlive() {
            return !close && (chunked || length >= 0 || !hasBody());
        }
    }

    /**
     * Reads a status line and header fields, skipping interim (1xx) responses.
     *
     * @throws EOFException when the stream ends before the first byte (the peer closed the connection)
     */
    static Head readHead(Input in) throws IOException {
        return readHead(in, null);
    }

    /** As {@link #readHead(Input)}, keeping the value of the header field {@code capture} (e.g. a WebSocket's accept key). */
    static Head readHead(Input in, String capture) throws IOException {
        while (true) {
            String captured = null;
            String status = in.readLine(true);
            if (status.length() < 12 || !status.startsWith("HTTP/1.") || status.charAt(8) != ' ') {
                throw new ProtocolException("not an HTTP/1.x status line: " + abbreviate(status));
            }
            int code = parseStatus(status);
            boolean http10 = status.charAt(7) == '0';
            long length = -1;
            boolean chunked = false;
            Boolean keepAlive = null;
            for (int n = 0; ; n++) {
                String line = in.readLine(false);
                if (line.isEmpty()) {
                    break;
                }
                if (n >= MAX_HEADERS) {
                    throw new ProtocolException("more than " + MAX_HEADERS + " header fields");
                }
                int colon = line.indexOf(':');
                if (colon <= 0) {
                    continue;
                }
                String name = line.substring(0, colon).trim();
                String value = line.substring(colon + 1).trim();
                if (name.equalsIgnoreCase("Content-Length")) {
                    try {
                        length = Long.parseLong(value);
                    } catch (NumberFormatException e) {
                        throw new ProtocolException("bad Content-Length: " + abbreviate(value));
                    }
                    if (length < 0) {
                        throw new ProtocolException("bad Content-Length: " + value);
                    }
                } else if (name.equalsIgnoreCase("Transfer-Encoding")) {
                    chunked = value.toLowerCase(java.util.Locale.ROOT).endsWith("chunked");
                } else if (capture != null && name.equalsIgnoreCase(capture)) {
                    captured = value;
                } else if (name.equalsIgnoreCase("Connection")) {
                    String v = value.toLowerCase(java.util.Locale.ROOT);
                    if (v.contains("close")) {
                        keepAlive = false;
                    } else if (v.contains("keep-alive") && keepAlive == null) {
                        keepAlive = true;
                    }
                }
            }
            if (code >= 100 && code < 200 && code != 101) {
                continue; // interim: the final response follows
            }
            boolean close = keepAlive != null ? !keepAlive : http10;
            return new Head(code, chunked ? -1 : length, chunked, close, captured);
        }
    }

    private static int parseStatus(String line) throws ProtocolException {
        int code = 0;
        for (int i = 9; i < 12; i++) {
            char c = line.charAt(i);
            if (c < '0' || c > '9') {
                throw new ProtocolException("bad status code in " + abbreviate(line));
            }
            code = code * 10 + (c - '0');
        }
        return code;
    }

    /** Reads the whole body of a response with {@code head} ({@link #MAX_BODY} at most). */
    static byte[] readBody(Input in, Head head) throws IOException {
        if (!head.hasBody()) {
            return new byte[0];
        }
        if (head.chunked()) {
            return body(in, head).readAllBytes();
        }
        if (head.length() >= 0) {
            if (head.length() > MAX_BODY) {
                throw new ProtocolException("a body of " + head.length() + " bytes, more than " + MAX_BODY);
            }
            return in.readExactly((int) head.length());
        }
        return body(in, head).readAllBytes();
    }

    /** The body of a response with {@code head} as a stream (for event streams); it reads from {@code in}. */
    static InputStream body(Input in, Head head) {
        if (!head.hasBody()) {
            return InputStream.nullInputStream();
        }
        if (head.chunked()) {
            return new Chunked(in);
        }
        return new Bounded(in, head.length() >= 0 ? head.length() : Long.MAX_VALUE);
    }

    private static String abbreviate(String s) {
        return s.length() <= 80 ? s : s.substring(0, 80) + "...";
    }

    /**
     * A buffered reader of one socket's input without locks (a {@code BufferedInputStream} takes a monitor per
     * {@code read()}). Concurrency: confined to the thread that reads the connection.
     */
    static final class Input {
        private final InputStream in;
        private final byte[] buffer;
        private int position;
        private int limit;
        private final char[] line = new char[256];

        Input(InputStream in, int size) {
            this.in = in;
            this.buffer = new byte[size];
        }

        /** Reads more into the buffer; false at the end of the stream. Only when the buffer is used up. */
        private boolean fill() throws IOException {
            int n = in.read(buffer, 0, buffer.length);
            if (n <= 0) {
                return false;
            }
            position = 0;
            limit = n;
            return true;
        }

        /** A line without its CR LF; {@code first}: an end of stream before any byte is an {@link EOFException}. */
        String readLine(boolean first) throws IOException {
            char[] chars = line;
            int length = 0;
            while (true) {
                if (position == limit && !fill()) {
                    if (first && length == 0) {
                        throw new EOFException("the connection was closed before a response");
                    }
                    throw new EOFException("the connection was closed in a response's head");
                }
                byte b = buffer[position++];
                if (b == '\n') {
                    if (length > 0 && chars[length - 1] == '\r') {
                        length--;
                    }
                    return new String(chars, 0, length);
                }
                if (length == MAX_LINE) {
                    throw new ProtocolException("a line of a response's head longer than " + MAX_LINE + " bytes");
                }
                if (length == chars.length) {
                    chars = java.util.Arrays.copyOf(chars, Math.min(MAX_LINE, chars.length * 2));
                }
                chars[length++] = (char) (b & 0xff);
            }
        }

        byte[] readExactly(int n) throws IOException {
            byte[] out = new byte[n];
            int done = 0;
            while (done < n) {
                int k = read(out, done, n - done);
                if (k < 0) {
                    throw new EOFException("the connection was closed after " + done + " of " + n + " bytes of a body");
                }
                done += k;
            }
            return out;
        }

        /** Up to {@code n} bytes: what is buffered, else one read of the socket; -1 at the end of the stream. */
        int read(byte[] out, int offset, int n) throws IOException {
            if (n == 0) {
                return 0;
            }
            if (position == limit) {
                if (n >= buffer.length) {
                    return in.read(out, offset, n);
                }
                if (!fill()) {
                    return -1;
                }
            }
            int k = Math.min(n, limit - position);
            System.arraycopy(buffer, position, out, offset, k);
            position += k;
            return k;
        }
    }

    /** A body of a known length, or up to the end of the connection. */
    private static final class Bounded extends InputStream {
        private final Input in;
        private long left;

        Bounded(Input in, long length) {
            this.in = in;
            this.left = length;
        }

        @Override
        public int read() throws IOException {
            byte[] one = new byte[1];
            return read(one, 0, 1) < 0 ? -1 : one[0] & 0xff;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            if (left == 0) {
                return -1;
            }
            int n = in.read(b, off, (int) Math.min(len, left));
            if (n < 0) {
                if (left != Long.MAX_VALUE) {
                    throw new EOFException("the connection was closed " + left + " bytes before the end of a body");
                }
                left = 0;
                return -1;
            }
            if (left != Long.MAX_VALUE) {
                left -= n;
            }
            return n;
        }

        @Override
        public byte[] readAllBytes() throws IOException {
            byte[] all = super.readAllBytes();
            if (all.length > MAX_BODY) {
                throw new ProtocolException("a body of more than " + MAX_BODY + " bytes");
            }
            return all;
        }
    }

    /**
     * A {@code chunked} body (RFC 9112 §7.1); chunk extensions and trailer fields are skipped. The CR LF after a
     * chunk's data is read with the next chunk's size, not before the data is returned: a server may send it only with
     * the next chunk (Jetty does), and an event stream's event must not wait for the next one.
     */
    private static final class Chunked extends InputStream {
        private final Input in;
        private long chunkLeft;
        private boolean afterChunk;
        private boolean done;
        private long total;

        Chunked(Input in) {
            this.in = in;
        }

        @Override
        public int read() throws IOException {
            byte[] one = new byte[1];
            return read(one, 0, 1) < 0 ? -1 : one[0] & 0xff;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            if (done) {
                return -1;
            }
            if (chunkLeft == 0) {
                if (afterChunk && !in.readLine(false).isEmpty()) {
                    throw new ProtocolException("no CR LF after a chunk's data");
                }
                afterChunk = false;
                String size = in.readLine(false);
                int semicolon = size.indexOf(';');
                try {
                    chunkLeft = Long.parseLong((semicolon < 0 ? size : size.substring(0, semicolon)).trim(), 16);
                } catch (NumberFormatException e) {
                    throw new ProtocolException("bad chunk size: " + abbreviate(size));
                }
                if (chunkLeft < 0) {
                    throw new ProtocolException("bad chunk size: " + size);
                }
                if (chunkLeft == 0) {
                    while (!in.readLine(false).isEmpty()) {
                        // trailer fields: skipped
                    }
                    done = true;
                    return -1;
                }
            }
            int n = in.read(b, off, (int) Math.min(len, chunkLeft));
            if (n < 0) {
                throw new EOFException("the connection was closed in a chunk");
            }
            chunkLeft -= n;
            afterChunk = chunkLeft == 0;
            return n;
        }

        @Override
        public byte[] readAllBytes() throws IOException {
            java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
            byte[] chunk = new byte[8192];
            int n;
            while ((n = read(chunk, 0, chunk.length)) >= 0) {
                out.write(chunk, 0, n);
                total += n;
                if (total > MAX_BODY) {
                    throw new ProtocolException("a body of more than " + MAX_BODY + " bytes");
                }
            }
            return out.toByteArray();
        }
    }
}
