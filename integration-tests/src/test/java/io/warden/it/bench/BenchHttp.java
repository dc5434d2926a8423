package io.warden.it.bench;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

/**
 * The HTTP transport of the benchmark's Warden clients: {@code POST path json -> (status, body)}. One instance per
 * client thread.
 */
interface BenchHttp extends AutoCloseable {
    record Response(int status, String body) {
    }

    /** {@code json} may be null (no body). */
    Response send(String method, String path, String json) throws IOException;

    default Response post(String path, String json) throws IOException {
        return send("POST", path, json);
    }

    @Override
    void close();

    /** {@code java.net.http.HttpClient} (HTTP/1.1), shared by the threads; it keeps a pool of keep-alive connections. */
    static BenchHttp jdk(HttpClient client, URI base) {
        return new BenchHttp() {
            @Override
            public Response send(String method, String path, String json) throws IOException {
                HttpRequest request = HttpRequest.newBuilder(base.resolve(path))
                        .timeout(Duration.ofSeconds(30))
                        .header("Content-Type", "application/json")
                        .method(method, json == null ? HttpRequest.BodyPublishers.noBody()
                                : HttpRequest.BodyPublishers.ofString(json))
                        .build();
                try {
                    HttpResponse<String> response = client.send(request, HttpResponse.BodyHandlers.ofString());
                    return new Response(response.statusCode(), response.body());
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IOException("interrupted", e);
                }
            }

            @Override
            public void close() {
                // the shared client is closed by its owner
            }
        };
    }

    /** A minimal blocking HTTP/1.1 client on one keep-alive socket: the least client-side CPU per call. */
    static BenchHttp raw(String host, int port) {
        return new RawHttp(host, port);
    }

    /** Concurrency: confined to one thread. */
    final class RawHttp implements BenchHttp {
        private final String host;
        private final int port;
        private Socket socket;
        private InputStream in;
        private OutputStream out;

        RawHttp(String host, int port) {
            this.host = host;
            this.port = port;
        }

        @Override
        public Response send(String method, String path, String json) throws IOException {
            boolean reused = socket != null;
            try {
                return exchange(method, path, json);
            } catch (IOException e) {
                close();
                if (!reused) {
                    throw e;
                }
                // A keep-alive connection the server had closed: one attempt on a fresh one.
                return exchange(method, path, json);
            }
        }

        private Response exchange(String method, String path, String json) throws IOException {
            if (socket == null) {
                socket = new Socket();
                socket.setTcpNoDelay(true);
                socket.connect(new InetSocketAddress(host, port), 2000);
                socket.setSoTimeout(30_000);
                in = new BufferedInputStream(socket.getInputStream(), 8192);
                out = new BufferedOutputStream(socket.getOutputStream(), 8192);
            }
            byte[] body = json == null ? new byte[0] : json.getBytes(StandardCharsets.UTF_8);
            String head = method + " " + path + " HTTP/1.1\r\nHost: " + host + ":" + port
                    + "\r\nContent-Type: application/json\r\nAccept: application/json\r\nContent-Length: " + body.length
                    + "\r\n\r\n";
            out.write(head.getBytes(StandardCharsets.US_ASCII));
            out.write(body);
            out.flush();

            String statusLine = readLine();
            if (statusLine == null) {
                throw new IOException("connection closed before the status line");
            }
            int status = Integer.parseInt(statusLine.substring(9, 12));
            long contentLength = -1;
            boolean chunked = false;
            boolean closeAfter = false;
            for (String line = readLine(); line != null && !line.isEmpty(); line = readLine()) {
                int colon = line.indexOf(':');
                if (colon < 0) {
                    continue;
                }
                String name = line.substring(0, colon).trim();
                String value = line.substring(colon + 1).trim();
                if (name.equalsIgnoreCase("Content-Length")) {
                    contentLength = Long.parseLong(value);
                } else if (name.equalsIgnoreCase("Transfer-Encoding") && value.equalsIgnoreCase("chunked")) {
                    chunked = true;
                } else if (name.equalsIgnoreCase("Connection") && value.equalsIgnoreCase("close")) {
                    closeAfter = true;
                }
            }
            String text;
            if (chunked) {
                ByteArrayOutputStream buffer = new ByteArrayOutputStream();
                while (true) {
                    String sizeLine = readLine();
                    if (sizeLine == null) {
                        throw new IOException("connection closed in a chunked body");
                    }
                    int semicolon = sizeLine.indexOf(';');
                    int size = Integer.parseInt((semicolon < 0 ? sizeLine : sizeLine.substring(0, semicolon)).trim(), 16);
                    if (size == 0) {
                        for (String trailer = readLine(); trailer != null && !trailer.isEmpty(); trailer = readLine()) {
                            // skip trailers
                        }
                        break;
                    }
                    buffer.write(in.readNBytes(size));
                    readLine();
                }
                text = buffer.toString(StandardCharsets.UTF_8);
            } else if (contentLength >= 0) {
                text = new String(in.readNBytes((int) contentLength), StandardCharsets.UTF_8);
            } else {
                text = new String(in.readAllBytes(), StandardCharsets.UTF_8);
                closeAfter = true;
            }
            if (closeAfter) {
                close();
            }
            return new Response(status, text);
        }

        private String readLine() throws IOException {
            StringBuilder line = new StringBuilder(64);
            while (true) {
                int c = in.read();
                if (c < 0) {
                    return line.length() == 0 ? null : line.toString();
                }
                if (c == '\n') {
                    int length = line.length();
                    if (length > 0 && line.charAt(length - 1) == '\r') {
                        line.setLength(length - 1);
                    }
                    return line.toString();
                }
                line.append((char) c);
            }
        }

        @Override
        public void close() {
            if (socket != null) {
                try {
                    socket.close();
                } catch (IOException ignored) {
                    // closing
                }
                socket = null;
            }
        }
    }
}
