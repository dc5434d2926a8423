package io.warden.client;

import java.io.EOFException;
import java.io.IOException;
import java.io.OutputStream;
import java.net.ProtocolException;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.Base64;
import java.util.concurrent.CompletableFuture;

/**
 * A client WebSocket (RFC 6455) on a connection of its own, for the keepalive stream: text messages out (masked, as a
 * client must), text messages, pings and the close frame in, read by a thread of its own that calls the
 * {@link Listener}. Only what the keepalive stream needs: no extensions, no subprotocols, binary messages ignored.
 *
 * <p>Concurrency: frames are written under the output's lock, by any thread (heartbeats from the client's timer, pongs
 * and the close reply from the reader); the listener is called by the reader thread only, one call at a time.
 * {@code outputClosed} is guarded by the output's lock.
 */
final class Http1WebSocket {
    /** Called on the socket's thread, in order; after {@link #onClose} or {@link #onError} nothing more. */
    interface Listener {
        void onText(String message);

        void onClose(int code, String reason);

        void onError(Throwable error);
    }

    static final int NORMAL_CLOSURE = 1000;
    /** A message larger than this ends the socket (the keepalive stream's are a few dozen bytes). */
    static final int MAX_MESSAGE = 64 * 1024;
    private static final String ACCEPT_GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";
    private static final SecureRandom RANDOM = new SecureRandom();

    private final Http1Client client;
    private final Http1Wire.Endpoint endpoint;
    private final Socket raw = new Socket();
    private final Object output = new Object();
    private OutputStream out;
    private boolean outputClosed;

    private Http1WebSocket(Http1Client client, Http1Wire.Endpoint endpoint) {
        this.client = client;
        this.endpoint = endpoint;
    }

    /**
     * Connects and upgrades on a new thread named {@code threadName}, which then reads the socket. Completes with the
     * socket once upgraded, or exceptionally (refused, timed out after {@code timeout}, not upgraded); closing it
     * meanwhile ({@link #abort}) is not possible before it completes, so {@code timeout} bounds it.
     */
    static CompletableFuture<Http1WebSocket> connect(Http1Client client, String base, String target, String[] headers,
                                                     Duration timeout, Listener listener, String threadName) {
        CompletableFuture<Http1WebSocket> upgraded = new CompletableFuture<>();
        Http1WebSocket ws;
        try {
            ws = new Http1WebSocket(client, Http1Wire.Endpoint.of(base));
        } catch (IllegalArgumentException e) {
            return CompletableFuture.failedFuture(new IOException(e.getMessage(), e));
        }
        Thread thread = new Thread(() -> ws.run(target, headers, timeout, listener, upgraded), threadName);
        thread.setDaemon(true);
        thread.start();
        return upgraded;
    }

    /** Sends one text message; fails (exceptionally) when the socket is closed or broken. */
    CompletableFuture<Void> sendText(String text) {
        try {
            send(0x1, text.getBytes(StandardCharsets.UTF_8));
            return CompletableFuture.completedFuture(null);
        } catch (IOException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    /** Sends a close frame (once); the socket stays readable until the gateway closes too, or {@link #abort}. */
    void sendClose(int code, String reason) {
        byte[] text = reason.getBytes(StandardCharsets.UTF_8);
        byte[] payload = new byte[2 + Math.min(text.length, 123)];
        payload[0] = (byte) (code >> 8);
        payload[1] = (byte) code;
        System.arraycopy(text, 0, payload, 2, payload.length - 2);
        try {
            send(0x8, payload);
        } catch (IOException ignored) {
            // closing anyway
        }
    }

    boolean isOutputClosed() {
        synchronized (output) {
            return outputClosed;
        }
    }

    /** Closes the connection at once; the reader ends (without calling the listener when it was already told). */
    void abort() {
        try {
            raw.close();
        } catch (IOException ignored) {
            // closing anyway
        }
    }

    private void send(int opcode, byte[] payload) throws IOException {
        byte[] frame = new byte[payload.length + (payload.length < 126 ? 6 : 8)];
        int i = 0;
        frame[i++] = (byte) (0x80 | opcode); // FIN: one frame per message
        if (payload.length < 126) {
            frame[i++] = (byte) (0x80 | payload.length);
        } else {
            frame[i++] = (byte) (0x80 | 126);
            frame[i++] = (byte) (payload.length >> 8);
            frame[i++] = (byte) payload.length;
        }
        byte[] mask = new byte[4];
        RANDOM.nextBytes(mask);
        System.arraycopy(mask, 0, frame, i, 4);
        i += 4;
        for (int k = 0; k < payload.length; k++) {
            frame[i + k] = (byte) (payload[k] ^ mask[k & 3]);
        }
        synchronized (output) {
            if (outputClosed) {
                throw new IOException("the keepalive socket at " + endpoint.hostHeader() + " is closed");
            }
            if (opcode == 0x8) {
                outputClosed = true;
            }
            out.write(frame);
            out.flush();
        }
    }

    private void run(String target, String[] headers, Duration timeout, Listener listener,
                     CompletableFuture<Http1WebSocket> upgraded) {
        Http1Wire.Input in;
        try {
            in = upgrade(target, headers, timeout);
        } catch (IOException | RuntimeException e) {
            abort();
            upgraded.completeExceptionally(e instanceof IOException ? e : new IOException(e.toString(), e));
            return;
        }
        upgraded.complete(this);
        try {
            read(in, listener);
        } catch (IOException | RuntimeException e) {
            abort();
            listener.onError(e);
        }
    }

    private Http1Wire.Input upgrade(String target, String[] headers, Duration timeout) throws IOException {
        byte[] nonce = new byte[16];
        RANDOM.nextBytes(nonce);
        String key = Base64.getEncoder().encodeToString(nonce);
        String[] all = new String[headers.length + 8];
        System.arraycopy(headers, 0, all, 0, headers.length);
        int i = headers.length;
        all[i++] = "Connection";
        all[i++] = "Upgrade";
        all[i++] = "Upgrade";
        all[i++] = "websocket";
        all[i++] = "Sec-WebSocket-Version";
        all[i++] = "13";
        all[i++] = "Sec-WebSocket-Key";
        all[i] = key;
        byte[] request = Http1Wire.request(endpoint, "GET", target, all, null);
        long deadline = client.ticker().getAsLong() + timeout.toNanos();
        Socket socket = client.connect(raw, endpoint, timeout.toMillis());
        synchronized (output) {
            out = socket.getOutputStream();
            out.write(request);
            out.flush();
        }
        Http1Wire.Input in = new Http1Wire.Input(socket.getInputStream(), 1024);
        raw.setSoTimeout((int) Math.max(1, java.util.concurrent.TimeUnit.NANOSECONDS.toMillis(deadline - client.ticker().getAsLong())));
        Http1Wire.Head head;
        try {
            head = Http1Wire.readHead(in, "Sec-WebSocket-Accept");
        } catch (java.net.SocketTimeoutException e) {
            throw new java.net.http.HttpTimeoutException("no upgrade within " + timeout.toMillis() + " ms");
        }
        if (head.status() != 101) {
            throw new IOException("the keepalive stream at " + endpoint.hostHeader() + " answered HTTP " + head.status()
                    + " to the upgrade");
        }
        if (!accept(key).equals(head.captured())) {
            throw new ProtocolException("the upgrade's Sec-WebSocket-Accept does not match its key");
        }
        raw.setSoTimeout(0);
        return in;
    }

    static String accept(String key) {
        try {
            byte[] digest = MessageDigest.getInstance("SHA-1").digest((key + ACCEPT_GUID).getBytes(StandardCharsets.US_ASCII));
            return Base64.getEncoder().encodeToString(digest);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("no SHA-1 in this JVM", e);
        }
    }

    /** Reads frames until the close frame, calling the listener. */
    private void read(Http1Wire.Input in, Listener listener) throws IOException {
        java.io.ByteArrayOutputStream message = new java.io.ByteArrayOutputStream();
        boolean inText = false; // in a text message (a binary one is skipped)
        byte[] header = new byte[8];
        while (true) {
            readFully(in, header, 2);
            boolean fin = (header[0] & 0x80) != 0;
            int opcode = header[0] & 0x0f;
            boolean masked = (header[1] & 0x80) != 0;
            long length = header[1] & 0x7f;
            if (length == 126) {
                readFully(in, header, 2);
                length = ((header[0] & 0xff) << 8) | (header[1] & 0xff);
            } else if (length == 127) {
                readFully(in, header, 8);
                length = 0;
                for (int k = 0; k < 8; k++) {
                    length = (length << 8) | (header[k] & 0xff);
                }
            }
            if (length > MAX_MESSAGE || message.size() + length > MAX_MESSAGE) {
                throw new ProtocolException("a WebSocket message of more than " + MAX_MESSAGE + " bytes");
            }
            byte[] mask = null;
            if (masked) {
                mask = new byte[4];
                readFully(in, mask, 4);
            }
            byte[] payload = in.readExactly((int) length);
            if (mask != null) {
                for (int k = 0; k < payload.length; k++) {
                    payload[k] ^= mask[k & 3];
                }
            }
            switch (opcode) {
                case 0x0, 0x1, 0x2 -> {
                    if (opcode != 0x0) {
                        inText = opcode == 0x1;
                    }
                    if (inText) {
                        message.write(payload);
                    }
                    if (fin) {
                        if (inText) {
                            listener.onText(message.toString(StandardCharsets.UTF_8));
                        }
                        message.reset();
                        inText = false;
                    }
                }
                case 0x8 -> {
                    int code = payload.length >= 2 ? ((payload[0] & 0xff) << 8) | (payload[1] & 0xff) : 1005;
                    String reason = payload.length > 2 ? new String(payload, 2, payload.length - 2, StandardCharsets.UTF_8) : "";
                    if (!isOutputClosed()) {
                        sendClose(code == 1005 ? NORMAL_CLOSURE : code, "");
                    }
                    abort();
                    listener.onClose(code, reason);
                    return;
                }
                case 0x9 -> send(0xA, payload); // ping: pong with the same data
                case 0xA -> {
                    // pong: nothing to do
                }
                default -> throw new ProtocolException("unknown WebSocket opcode " + opcode);
            }
        }
    }

    private static void readFully(Http1Wire.Input in, byte[] into, int n) throws IOException {
        int done = 0;
        while (done < n) {
            int k = in.read(into, done, n - done);
            if (k < 0) {
                throw new EOFException("the keepalive socket was closed without a close frame");
            }
            done += k;
        }
    }
}
