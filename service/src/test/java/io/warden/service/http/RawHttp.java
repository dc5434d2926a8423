package io.warden.service.http;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * HTTP/1.1 on a raw socket, for tests that must send what {@code java.net.http} refuses to (a bad request line, two
 * Content-Lengths, broken chunks, invalid bytes): a {@link Req} is exactly the bytes on the wire, with
 * {@code Connection: close}; {@link #send} writes it, half-closes, and reads one reply (past any 100 Continue; an
 * event stream or a 101 only to its headers).
 */
final class RawHttp {
    private RawHttp() {
    }

    /** One request as bytes go on the wire; {@code line} replaces the request line when set. */
    static final class Req {
        final String seed;
        String category = "none";
        final List<String> mutations = new ArrayList<>();
        String method;
        String target;
        String version = "HTTP/1.1";
        String line;
        final List<String[]> headers = new ArrayList<>();
        byte[] body;
        /** Whether the test adds a Content-Length for the body (off once a mutation set its own framing). */
        boolean frame = true;
        boolean host = true;

        Req(String seed, String method, String target, String body) {
            this.seed = seed;
            this.method = method;
            this.target = target;
            this.body = body == null ? null : body.getBytes(StandardCharsets.UTF_8);
            if (body != null) {
                headers.add(new String[] {"Content-Type", "application/json"});
            }
        }

        Req header(String name, String value) {
            headers.add(new String[] {name, value});
            return this;
        }

        void removeHeader(String name) {
            headers.removeIf(h -> h[0].equalsIgnoreCase(name));
        }

        boolean hasHeader(String name) {
            return headers.stream().anyMatch(h -> h[0].equalsIgnoreCase(name));
        }

        /** Whether the request line on the wire is a HEAD's (whose reply has no body). */
        boolean isHead() {
            return (line != null ? line : method + " ").startsWith("HEAD ");
        }

        String bodyText() {
            return body == null ? null : new String(body, StandardCharsets.UTF_8);
        }

        byte[] bytes() {
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            StringBuilder head = new StringBuilder();
            head.append(line != null ? line : method + " " + target + " " + version).append("\r\n");
            if (host) {
                head.append("Host: 127.0.0.1\r\n");
            }
            for (String[] h : headers) {
                head.append(h[0]).append(": ").append(h[1]).append("\r\n");
            }
            if (frame && body != null && !hasHeader("Content-Length") && !hasHeader("Transfer-Encoding")) {
                head.append("Content-Length: ").append(body.length).append("\r\n");
            }
            head.append("Connection: close\r\n\r\n");
            out.writeBytes(head.toString().getBytes(StandardCharsets.ISO_8859_1));
            if (body != null) {
                out.writeBytes(body);
            }
            return out.toByteArray();
        }

        @Override
        public String toString() {
            return "[" + seed + " / " + category + ": " + String.join(", ", mutations) + "] " + escape(bytes(), 600);
        }
    }

    /** A reply as read from the socket: status -1 when there was none (closed, or a timeout). */
    record Reply(int status, Map<String, String> headers, byte[] body, String problem, long millis) {
        String contentType() {
            return headers.getOrDefault("content-type", "");
        }

        @Override
        public String toString() {
            if (status < 0) {
                return problem + " after " + millis + " ms";
            }
            return status + " " + contentType() + " " + escape(body, 400);
        }
    }

    /** Sends {@code req} and reads its reply; no reply within {@code timeoutMs} is a reply with status -1, "TIMEOUT". */
    static Reply send(int port, Req req, int timeoutMs) {
        long start = System.nanoTime();
        try (Socket socket = new Socket("127.0.0.1", port)) {
            socket.setSoTimeout(timeoutMs);
            try {
                socket.getOutputStream().write(req.bytes());
                socket.getOutputStream().flush();
                // The request is all there is: an incomplete body (a Content-Length or chunk larger than what follows)
                // then ends at EOF, and the server must answer instead of waiting for the rest.
                socket.shutdownOutput();
            } catch (IOException e) {
                // the server may answer and close before it read everything (a huge header): read what it said
            }
            return read(socket.getInputStream(), req, start);
        } catch (SocketTimeoutException e) {
            return new Reply(-1, Map.of(), new byte[0], "TIMEOUT", (System.nanoTime() - start) / 1_000_000);
        } catch (IOException e) {
            return new Reply(-1, Map.of(), new byte[0], "IO " + e, (System.nanoTime() - start) / 1_000_000);
        }
    }

    /** Reads one reply to a request (not a HEAD) already written on {@code socket}; status -1 as for {@link #send}. */
    static Reply receive(Socket socket, long start) {
        try {
            return read(socket.getInputStream(), new Req("receive", "POST", "/", null), start);
        } catch (SocketTimeoutException e) {
            return new Reply(-1, Map.of(), new byte[0], "TIMEOUT", (System.nanoTime() - start) / 1_000_000);
        } catch (IOException e) {
            return new Reply(-1, Map.of(), new byte[0], "IO " + e, (System.nanoTime() - start) / 1_000_000);
        }
    }

    private static Reply read(InputStream in, Req req, long start) throws IOException {
        Reply reply;
        do {
            reply = readOne(in, req, start);
        } while (reply.status() >= 100 && reply.status() < 200 && reply.status() != 101); // 100 Continue: read on
        return reply;
    }

    private static Reply readOne(InputStream in, Req req, long start) throws IOException {
        ByteArrayOutputStream head = new ByteArrayOutputStream();
        int b;
        int matched = 0;
        while (matched < 4) {
            try {
                b = in.read();
            } catch (java.net.SocketException e) {
                b = -1; // reset by the server
            }
            if (b < 0) {
                break;
            }
            head.write(b);
            matched = (b == "\r\n\r\n".charAt(matched)) ? matched + 1 : (b == '\r' ? 1 : 0);
        }
        long ms = (System.nanoTime() - start) / 1_000_000;
        if (head.size() == 0) {
            return new Reply(-1, Map.of(), new byte[0], "CLOSED", ms);
        }
        String[] lines = head.toString(StandardCharsets.ISO_8859_1).split("\r\n");
        Matcher status = Pattern.compile("HTTP/1\\.[01] (\\d{3})( .*)?").matcher(lines[0]);
        if (!status.matches()) {
            return new Reply(-1, Map.of(), head.toByteArray(), "NOT HTTP: " + escape(head.toByteArray(), 200), ms);
        }
        Map<String, String> headers = new LinkedHashMap<>();
        for (int i = 1; i < lines.length; i++) {
            int colon = lines[i].indexOf(':');
            if (colon > 0) {
                headers.put(lines[i].substring(0, colon).trim().toLowerCase(Locale.ROOT), lines[i].substring(colon + 1).trim());
            }
        }
        int code = Integer.parseInt(status.group(1));
        String type = headers.getOrDefault("content-type", "");
        byte[] body;
        if (code >= 100 && code < 200 || type.startsWith("text/event-stream") || req.isHead()) {
            body = new byte[0]; // a stream or an upgrade: its headers are the answer
        } else if (headers.containsKey("content-length")) {
            body = in.readNBytes(Integer.parseInt(headers.get("content-length")));
        } else if ("chunked".equalsIgnoreCase(headers.get("transfer-encoding"))) {
            body = dechunk(in);
        } else {
            body = in.readAllBytes();
        }
        return new Reply(code, headers, body, null, (System.nanoTime() - start) / 1_000_000);
    }

    private static byte[] dechunk(InputStream in) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        while (true) {
            StringBuilder size = new StringBuilder();
            int b;
            while ((b = in.read()) >= 0 && b != '\n') {
                if (b != '\r') {
                    size.append((char) b);
                }
            }
            int semi = size.indexOf(";");
            int n = Integer.parseInt((semi < 0 ? size.toString() : size.substring(0, semi)).trim(), 16);
            if (n == 0) {
                return out.toByteArray();
            }
            out.writeBytes(in.readNBytes(n));
            in.read();
            in.read();
        }
    }

    /** Bytes as printable ASCII: \r \n \t as such, other controls and non-ASCII as \xNN; long runs shortened. */
    static String escape(byte[] bytes, int max) {
        StringBuilder b = new StringBuilder();
        int run = 0;
        for (int i = 0; i < bytes.length; i++) {
            int c = bytes[i] & 0xff;
            if (i > 0 && bytes[i] == bytes[i - 1]) {
                run++;
                if (run == 8) {
                    int j = i;
                    while (j < bytes.length && bytes[j] == bytes[i]) {
                        j++;
                    }
                    b.append("…(").append(j - i + 8).append("×)");
                    i = j - 1;
                    run = 0;
                    continue;
                }
                if (run > 8) {
                    continue;
                }
            } else {
                run = 0;
            }
            if (c == '\r') {
                b.append("\\r");
            } else if (c == '\n') {
                b.append("\\n");
            } else if (c == '\t') {
                b.append("\\t");
            } else if (c < 0x20 || c >= 0x7f) {
                b.append(String.format("\\x%02x", c));
            } else {
                b.append((char) c);
            }
            if (b.length() > max) {
                return b.append("…(").append(bytes.length).append(" bytes)").toString();
            }
        }
        return b.toString();
    }
}
