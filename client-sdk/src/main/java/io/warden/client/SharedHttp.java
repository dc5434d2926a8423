package io.warden.client;

import java.net.http.HttpClient;
import java.time.Duration;
import javax.net.ssl.SSLContext;

/**
 * The one {@link HttpClient} of every {@link WardenClient} in this process. On Java 17 an {@code HttpClient} cannot
 * be closed: its selector thread and connection pool live until the client is garbage collected, so one client per
 * {@code WardenClient} left about 260 threads after 200 create/close cycles until a GC.
 * Shared, there is one selector thread and one pool for the whole process however many clients come and go; every
 * call still has its own timeout ({@code HttpRequest.timeout}, which counts from the send, connecting included), and
 * every WebSocket its own connect timeout.
 *
 * <p>Concurrency: the client is created once, on first use (class-holder idiom), and is thread-safe.
 */
final class SharedHttp {
    /** The longest a TCP connect may take; a call's own timeout cuts it shorter. */
    static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(2);

    private SharedHttp() {
    }

    private static final class Holder {
        static final HttpClient CLIENT = HttpClient.newBuilder()
                .version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(CONNECT_TIMEOUT)
                .followRedirects(HttpClient.Redirect.NEVER)
                .build();
    }

    static HttpClient client() {
        return Holder.CLIENT;
    }

    /**
     * Clients with an {@link SSLContext} of their own (mTLS or a private CA), one per context: applications make one
     * context and keep it, so this map holds a handful (each entry lives as long as the process, as the shared client
     * does). Thread-safe.
     */
    private static final java.util.Map<SSLContext, HttpClient> WITH_TLS = new java.util.concurrent.ConcurrentHashMap<>();

    static HttpClient client(SSLContext ssl) {
        if (ssl == null) {
            return client();
        }
        return WITH_TLS.computeIfAbsent(ssl, c -> HttpClient.newBuilder()
                .version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(CONNECT_TIMEOUT)
                .followRedirects(HttpClient.Redirect.NEVER)
                .sslContext(c)
                .build());
    }
}
