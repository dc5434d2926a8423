package io.warden.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.http.HttpTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The SDK's HTTP/1.1 client against a scripted server on a real socket: keep-alive reuse, a connection the server
 * closes while idle, timeouts, the framings of a body, and closing.
 */
class Http1ClientTest {
    private ScheduledExecutorService scheduler;
    private Http1Client client;
    private ServerSocket server;
    private final AtomicInteger accepted = new AtomicInteger();
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();
    /** The requests the server read, head and body, in order. */
    private final BlockingQueue<String> requests = new LinkedBlockingQueue<>();
    /** What the server does with each request: returns the bytes to answer, or null to close the connection. */
    private volatile Script script = request -> ok("{\"n\":1}");

    interface Script {
        byte[] answer(String request) throws Exception;
    }

    @BeforeEach
    void setUp() throws IOException {
        scheduler = Executors.newSingleThreadScheduledExecutor();
        client = new Http1Client(null, scheduler);
        server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread acceptor = new Thread(this::accept, "scripted-server");
        acceptor.setDaemon(true);
        acceptor.start();
    }

    @AfterEach
    void tearDown() throws IOException {
        client.close();
        server.close();
        for (Socket s : sockets) {
            s.close();
        }
        scheduler.shutdownNow();
    }

    private String base() {
        return "http://127.0.0.1:" + server.getLocalPort();
    }

    private Http1Client.Response post(String target, String json, Duration timeout) throws Exception {
        return client.send(base(), "POST", target, new String[]{"Content-Type", "application/json"},
                json.getBytes(StandardCharsets.UTF_8), timeout).get(10, TimeUnit.SECONDS);
    }

    @Test
    void requests_carryHostLengthAndHeaders_andTheConnectionIsReused() throws Exception {
        Http1Client.Response first = post("/v1/acquire", "{\"a\":1}", Duration.ofSeconds(5));
        Http1Client.Response second = post("/v1/release", "{\"b\":22}", Duration.ofSeconds(5));

        assertThat(first.status()).isEqualTo(200);
        assertThat(new String(first.body(), StandardCharsets.UTF_8)).isEqualTo("{\"n\":1}");
        assertThat(second.status()).isEqualTo(200);
        assertThat(accepted.get()).as("one keep-alive connection").isEqualTo(1);
        assertThat(requests.take()).isEqualTo("POST /v1/acquire HTTP/1.1\r\nHost: 127.0.0.1:" + server.getLocalPort()
                + "\r\nContent-Type: application/json\r\nContent-Length: 7\r\n\r\n{\"a\":1}");
        assertThat(requests.take()).startsWith("POST /v1/release HTTP/1.1\r\n").endsWith("Content-Length: 8\r\n\r\n{\"b\":22}");
    }

    @Test
    void aTargetOutsidePrintableAscii_isPercentEncoded() throws Exception {
        client.send(base(), "GET", "/v1/locks/jobs/caf\u00e9 1", new String[0], null, Duration.ofSeconds(5))
                .get(10, TimeUnit.SECONDS);
        assertThat(requests.take()).startsWith("GET /v1/locks/jobs/caf%C3%A9%201 HTTP/1.1\r\n");
    }

    @Test
    void aHeaderWithALineBreak_isRefusedBeforeAnythingIsSent() {
        assertThatThrownBy(() -> client.send(base(), "GET", "/", new String[]{"Authorization", "Bearer x\r\nEvil: 1"},
                null, Duration.ofSeconds(5))).isInstanceOf(IllegalArgumentException.class);
        assertThat(accepted.get()).isZero();
    }

    @Test
    void aConnectionTheServerClosesWhileIdle_isDroppedAtOnce_andTheNextCallOpensAnother() throws Exception {
        script = request -> concat(ok("{}"), null);
        post("/one", "{}", Duration.ofSeconds(5));
        Cell.await("the closed connection is dropped", () -> client.connections() == 0);

        script = request -> ok("{\"again\":true}");
        Http1Client.Response again = post("/two", "{}", Duration.ofSeconds(5));
        assertThat(new String(again.body(), StandardCharsets.UTF_8)).isEqualTo("{\"again\":true}");
        assertThat(accepted.get()).isEqualTo(2);
    }

    @Test
    void noAnswerInTime_failsWithAnHttpTimeout_andTheConnectionGoes() throws Exception {
        script = request -> {
            Thread.sleep(3000);
            return ok("{}");
        };
        long start = System.nanoTime();
        assertThatThrownBy(() -> post("/slow", "{}", Duration.ofMillis(300)))
                .isInstanceOf(ExecutionException.class).hasCauseInstanceOf(HttpTimeoutException.class);
        assertThat(System.nanoTime() - start).isLessThan(TimeUnit.SECONDS.toNanos(2));
        assertThat(client.connections()).isZero();
    }

    @Test
    void noServer_failsWithTheConnectError() throws IOException {
        // A port bound and not listening: refused, and taken, so no other socket (nor a connection to itself, which a
        // freed ephemeral port allows) can answer there.
        try (Socket holder = new Socket()) {
            holder.bind(new java.net.InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
            int port = holder.getLocalPort();
            assertThatThrownBy(() -> client.send("http://127.0.0.1:" + port, "GET", "/", new String[0], null,
                    Duration.ofSeconds(5)).get(10, TimeUnit.SECONDS)).hasCauseInstanceOf(java.net.ConnectException.class);
        }
    }

    @Test
    void chunkedBodies_andInterimResponses_areRead() throws Exception {
        script = request -> ("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 409 Conflict\r\nTransfer-Encoding: chunked\r\n\r\n"
                + "4;ext=1\r\n{\"co\r\n6\r\nde\":1}\r\n0\r\nTrailer: x\r\n\r\n").getBytes(StandardCharsets.US_ASCII);
        Http1Client.Response r = post("/chunked", "{}", Duration.ofSeconds(5));
        assertThat(r.status()).isEqualTo(409);
        assertThat(new String(r.body(), StandardCharsets.UTF_8)).isEqualTo("{\"code\":1}");
        script = request -> ok("{}");
        post("/after", "{}", Duration.ofSeconds(5));
        assertThat(accepted.get()).as("the connection was kept after the chunked body").isEqualTo(1);
    }

    @Test
    void aStreamsChunk_isReadBeforeTheCrLfThatEndsIt_arrives() throws Exception {
        // Jetty sends the CR LF after a chunk's data only with the next chunk: an event must not wait for the next one.
        BlockingQueue<String> release = new LinkedBlockingQueue<>();
        script = request -> {
            Socket s = sockets.get(sockets.size() - 1);
            OutputStream out = s.getOutputStream();
            out.write(("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
                    + "b\r\ndata: one\n\n").getBytes(StandardCharsets.US_ASCII));
            out.flush();
            release.take();
            out.write("\r\nb\r\ndata: two\n\n\r\n0\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
            out.flush();
            return new byte[0];
        };
        try (Http1Client.Stream stream = client.stream(base())) {
            assertThat(stream.open("GET", "/v1/watch?name=a", new String[]{"Accept", "text/event-stream"},
                    Duration.ofSeconds(5))).isEqualTo(200);
            InputStream body = stream.body();
            byte[] first = new byte[11];
            assertThat(body.readNBytes(first, 0, 11)).isEqualTo(11);
            assertThat(new String(first, StandardCharsets.US_ASCII)).isEqualTo("data: one\n\n");
            release.add("go");
            assertThat(new String(body.readAllBytes(), StandardCharsets.US_ASCII)).isEqualTo("data: two\n\n");
        }
    }

    @Test
    void closingAStream_wakesItsReader() throws Exception {
        script = request -> ("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n").getBytes(StandardCharsets.US_ASCII);
        Http1Client.Stream stream = client.stream(base());
        stream.open("GET", "/v1/watch?name=a", new String[0], Duration.ofSeconds(5));
        InputStream body = stream.body();
        scheduler.schedule(stream::close, 200, TimeUnit.MILLISECONDS);
        long start = System.nanoTime();
        assertThatThrownBy(body::read).isInstanceOf(IOException.class);
        assertThat(System.nanoTime() - start).isLessThan(TimeUnit.SECONDS.toNanos(5));
    }

    @Test
    void close_endsTheConnectionsThreads_andLaterCallsFail() throws Exception {
        for (int i = 0; i < 3; i++) {
            post("/x", "{}", Duration.ofSeconds(5));
        }
        assertThat(connectionThreads()).isPositive();
        client.close();
        Cell.await("the connections' threads ended", () -> connectionThreads() == 0);
        assertThatThrownBy(() -> post("/y", "{}", Duration.ofSeconds(5))).hasCauseInstanceOf(IOException.class);
    }

    @Test
    void aWebSocket_upgrades_answersPings_joinsFragments_andReportsTheCloseCode() throws Exception {
        BlockingQueue<String> events = new LinkedBlockingQueue<>();
        BlockingQueue<byte[]> clientFrames = new LinkedBlockingQueue<>();
        script = request -> {
            String key = request.lines().filter(l -> l.startsWith("Sec-WebSocket-Key:")).findFirst().orElseThrow()
                    .substring(18).trim();
            Socket s = sockets.get(sockets.size() - 1);
            OutputStream out = s.getOutputStream();
            out.write(("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                    + "Sec-WebSocket-Accept: " + Http1WebSocket.accept(key) + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
            out.write(new byte[]{(byte) 0x89, 2, 'h', 'i'}); // ping
            out.write(new byte[]{(byte) 0x01, 3, '{', '"', 't'}); // text, not final
            out.write(new byte[]{(byte) 0x80, 2, '"', '}'}); // continuation, final
            out.flush();
            clientFrames.add(s.getInputStream().readNBytes(8)); // the pong: 2 + 4 (mask) + 2
            clientFrames.add(s.getInputStream().readNBytes(8)); // the client's text "{}"
            out.write(new byte[]{(byte) 0x88, 6, 0x11, 0x34, 'g', 'o', 'n', 'e'}); // close 4404 "gone"
            out.flush();
            return new byte[0];
        };
        Http1WebSocket ws = Http1WebSocket.connect(client, base(), "/v1/sessions/s1/keepalive", new String[0],
                Duration.ofSeconds(5), new Http1WebSocket.Listener() {
                    @Override
                    public void onText(String message) {
                        events.add("text " + message);
                    }

                    @Override
                    public void onClose(int code, String reason) {
                        events.add("close " + code + " " + reason);
                    }

                    @Override
                    public void onError(Throwable error) {
                        events.add("error " + error);
                    }
                }, "test-socket").get(10, TimeUnit.SECONDS);

        assertThat(events.poll(10, TimeUnit.SECONDS)).isEqualTo("text {\"t\"}");
        ws.sendText("{}").get(5, TimeUnit.SECONDS);
        assertThat(unmask(clientFrames.poll(10, TimeUnit.SECONDS))).as("a pong with the ping's data").isEqualTo("8a:hi");
        assertThat(unmask(clientFrames.poll(10, TimeUnit.SECONDS))).isEqualTo("81:{}");
        assertThat(events.poll(10, TimeUnit.SECONDS)).isEqualTo("close 4404 gone");
        assertThat(ws.isOutputClosed()).as("the close was answered").isTrue();
        assertThat(requests.take()).startsWith("GET /v1/sessions/s1/keepalive HTTP/1.1\r\n").contains("Upgrade: websocket\r\n")
                .contains("Sec-WebSocket-Version: 13\r\n");
    }

    /** A masked client frame with a short payload as "opcode-byte-in-hex:payload". */
    private static String unmask(byte[] frame) {
        assertThat(frame[1] & 0x80).as("client frames are masked").isEqualTo(0x80);
        int length = frame[1] & 0x7f;
        StringBuilder payload = new StringBuilder();
        for (int i = 0; i < length; i++) {
            payload.append((char) (frame[6 + i] ^ frame[2 + (i & 3)]));
        }
        return Integer.toHexString(frame[0] & 0xff) + ":" + payload;
    }

    private static long connectionThreads() {
        return Thread.getAllStackTraces().keySet().stream().filter(t -> t.getName().startsWith("warden-http-")).count();
    }

    private static byte[] ok(String json) {
        byte[] body = json.getBytes(StandardCharsets.UTF_8);
        return concat(("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " + body.length + "\r\n\r\n")
                .getBytes(StandardCharsets.US_ASCII), body);
    }

    /** {@code a} then {@code b}; a null {@code b} means: then close the connection. */
    private static byte[] concat(byte[] a, byte[] b) {
        if (b == null) {
            byte[] out = new byte[a.length + 1];
            System.arraycopy(a, 0, out, 0, a.length);
            out[a.length] = -1; // marker: close after answering
            return out;
        }
        byte[] out = new byte[a.length + b.length];
        System.arraycopy(a, 0, out, 0, a.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }

    private void accept() {
        while (!server.isClosed()) {
            try {
                Socket s = server.accept();
                accepted.incrementAndGet();
                sockets.add(s);
                Thread t = new Thread(() -> serve(s), "scripted-connection");
                t.setDaemon(true);
                t.start();
            } catch (IOException e) {
                return;
            }
        }
    }

    /** Reads requests (head and Content-Length body) and answers each as the script says. */
    private void serve(Socket s) {
        try (s; InputStream in = s.getInputStream(); OutputStream out = s.getOutputStream()) {
            while (true) {
                ByteArrayOutputStream head = new ByteArrayOutputStream();
                int matched = 0;
                int b;
                while (matched < 4 && (b = in.read()) >= 0) {
                    head.write(b);
                    matched = (b == '\r' && (matched == 0 || matched == 2)) || (b == '\n' && (matched == 1 || matched == 3))
                            ? matched + 1 : 0;
                }
                if (matched < 4) {
                    return;
                }
                String text = head.toString(StandardCharsets.US_ASCII);
                int length = 0;
                for (String line : text.split("\r\n")) {
                    if (line.toLowerCase().startsWith("content-length:")) {
                        length = Integer.parseInt(line.substring(15).trim());
                    }
                }
                String request = text + new String(in.readNBytes(length), StandardCharsets.UTF_8);
                requests.add(request);
                byte[] answer = script.answer(request);
                boolean close = answer.length > 0 && answer[answer.length - 1] == -1;
                out.write(answer, 0, close ? answer.length - 1 : answer.length);
                out.flush();
                if (close) {
                    return;
                }
            }
        } catch (Exception e) {
            // the connection ends
        }
    }
}
