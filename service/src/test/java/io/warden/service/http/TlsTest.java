package io.warden.service.http;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.warden.service.Gateway;
import io.warden.service.auth.AuthFile;
import io.warden.service.support.TestCa;
import io.warden.service.support.WardenFixture;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.WebSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * HTTPS and client certificates: a gateway with {@code tls-cert}, {@code tls-key} and {@code tls-client-ca}
 * and an auth file with a principal named by a certificate ({@code name:} without a token). Real TLS: certificates
 * made with {@code openssl} for this run, a real JDK client.
 */
class TlsTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String TOKEN = "tls-token-0123456789abcdef";

    @TempDir
    static Path dir;
    private static WardenFixture fixture;
    private static Gateway gateway;
    private static String base;

    @BeforeAll
    static void start() throws Exception {
        new TestCa(dir).ca("test-ca").ca("rogue-ca")
                .issue("test-ca", "gateway", "IP:127.0.0.1,DNS:localhost")
                .issue("test-ca", "ci-runner", "DNS:ci-runner.example.com")
                .issue("test-ca", "stranger", "DNS:stranger.example.com")
                .issue("rogue-ca", "ci-runner-forged", "DNS:ci-runner.example.com");
        Path auth = dir.resolve("auth.yaml");
        Files.writeString(auth, "principals:\n"
                + "  - name: ci-runner\n    grants: [{namespace: builds, role: lock}]\n"
                + "  - name: app\n    token_sha256: " + AuthFile.sha256(TOKEN) + "\n    grants: [{namespace: builds, role: lock}]\n");
        fixture = new WardenFixture();
        gateway = fixture.gateway(fixture.config().toBuilder().httpHost("127.0.0.1").authFile(auth)
                .tlsCert(dir.resolve("gateway.pem")).tlsKey(dir.resolve("gateway.key"))
                .tlsClientCa(dir.resolve("test-ca.pem")).build());
        base = "https://127.0.0.1:" + gateway.httpPort();
    }

    @AfterAll
    static void stop() throws Exception {
        if (fixture != null) {
            fixture.close();
        }
    }

    /** A client that trusts the test CA and, with {@code identity}, presents that certificate. */
    static HttpClient client(String identity) throws Exception {
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(Pem.trustStore(dir.resolve("test-ca.pem")));
        KeyManagerFactory kmf = null;
        if (identity != null) {
            KeyStore ks = Pem.keyStore(dir.resolve(identity + ".pem"), dir.resolve(identity + ".key"));
            kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
            kmf.init(ks, Pem.PASSWORD);
        }
        SSLContext ssl = SSLContext.getInstance("TLS");
        ssl.init(kmf == null ? null : kmf.getKeyManagers(), tmf.getTrustManagers(), null);
        return HttpClient.newBuilder().sslContext(ssl).version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(Duration.ofSeconds(5)).build();
    }

    /** A client that presents {@code identity}'s certificate whatever CAs the server asks for. */
    static HttpClient insisting(String identity) throws Exception {
        KeyStore ks = Pem.keyStore(dir.resolve(identity + ".pem"), dir.resolve(identity + ".key"));
        KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        kmf.init(ks, Pem.PASSWORD);
        javax.net.ssl.X509ExtendedKeyManager real = (javax.net.ssl.X509ExtendedKeyManager) kmf.getKeyManagers()[0];
        javax.net.ssl.X509ExtendedKeyManager always = new javax.net.ssl.X509ExtendedKeyManager() {
            @Override
            public String[] getClientAliases(String type, java.security.Principal[] issuers) {
                return new String[]{"warden"};
            }

            @Override
            public String chooseClientAlias(String[] type, java.security.Principal[] issuers, java.net.Socket s) {
                return "warden";
            }

            @Override
            public String chooseEngineClientAlias(String[] type, java.security.Principal[] issuers, javax.net.ssl.SSLEngine e) {
                return "warden";
            }

            @Override
            public String[] getServerAliases(String type, java.security.Principal[] issuers) {
                return null;
            }

            @Override
            public String chooseServerAlias(String type, java.security.Principal[] issuers, java.net.Socket s) {
                return null;
            }

            @Override
            public java.security.cert.X509Certificate[] getCertificateChain(String alias) {
                return real.getCertificateChain(alias);
            }

            @Override
            public java.security.PrivateKey getPrivateKey(String alias) {
                return real.getPrivateKey(alias);
            }
        };
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(Pem.trustStore(dir.resolve("test-ca.pem")));
        SSLContext ssl = SSLContext.getInstance("TLS");
        ssl.init(new javax.net.ssl.KeyManager[]{always}, tmf.getTrustManagers(), null);
        return HttpClient.newBuilder().sslContext(ssl).version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(Duration.ofSeconds(5)).build();
    }

    static HttpResponse<String> post(HttpClient c, String path, String body, String token) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(base + path)).timeout(Duration.ofSeconds(10))
                .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body));
        if (token != null) {
            b.header("Authorization", "Bearer " + token);
        }
        return c.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void aVerifiedClientCertificate_namesItsPrincipal_andItsSessionIsItsOwn() throws Exception {
        HttpClient ci = client("ci-runner");
        HttpResponse<String> opened = post(ci, "/v1/sessions", "{\"client_id\":\"ci-1\"}", null);
        assertThat(opened.statusCode()).as(opened.body()).isEqualTo(201);
        String session = JSON.readTree(opened.body()).get("session_id").asText();
        HttpResponse<String> taken = post(ci, "/v1/acquire", "{\"session_id\":\"" + session + "\",\"name\":\"builds/b1\"}", null);
        assertThat(taken.statusCode()).as(taken.body()).isEqualTo(200);
        JsonNode holder = JSON.readTree(taken.body()).get("holders").get(0);
        assertThat(holder.get("principal").asText()).isEqualTo("ci-runner");
        assertThat(holder.get("session_id").asText()).isEqualTo(session);

        // The token principal, over the same HTTPS without a certificate, may not use ci-runner's session.
        HttpResponse<String> other = post(client(null), "/v1/sessions/" + session + "/keepalive", "{}", TOKEN);
        assertThat(other.statusCode()).as(other.body()).isEqualTo(403);

        // The keepalive socket over WSS names the same principal from the certificate.
        CompletableFuture<String> frame = new CompletableFuture<>();
        WebSocket ws = ci.newWebSocketBuilder().buildAsync(URI.create("wss://127.0.0.1:" + gateway.httpPort()
                + "/v1/sessions/" + session + "/keepalive"), new WebSocket.Listener() {
                    @Override
                    public CompletionStage<?> onText(WebSocket w, CharSequence data, boolean last) {
                        frame.complete(data.toString());
                        return null;
                    }

                    @Override
                    public CompletionStage<?> onClose(WebSocket w, int code, String reason) {
                        frame.complete("closed " + code + " " + reason);
                        return null;
                    }
                }).get(10, TimeUnit.SECONDS);
        ws.sendText("hb", true);
        assertThat(frame.get(10, TimeUnit.SECONDS)).contains("ttl_ms_remaining");
        ws.abort();
    }

    @Test
    void aCertificateOfAnotherCa_isRefused_andOneThatNamesNoPrincipalIs401() throws Exception {
        // The JDK client offers only a certificate of a CA the gateway asks for: the forged one is not sent, and the
        // request without credentials is a 401. A client that insists on sending it fails the handshake.
        HttpResponse<String> forged = post(client("ci-runner-forged"), "/v1/sessions", "{\"client_id\":\"x\"}", null);
        assertThat(forged.statusCode()).as(forged.body()).isEqualTo(401);
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> post(insisting("ci-runner-forged"), "/v1/sessions",
                "{\"client_id\":\"x\"}", null)).isInstanceOf(IOException.class);
        HttpResponse<String> stranger = post(client("stranger"), "/v1/sessions", "{\"client_id\":\"x\"}", null);
        assertThat(stranger.statusCode()).as(stranger.body()).isEqualTo(401);
        assertThat(stranger.body()).contains("UNAUTHENTICATED", "stranger");
    }

    @Test
    void withoutACertificate_aBearerTokenStillWorks_overHttps() throws Exception {
        HttpResponse<String> r = post(client(null), "/v1/sessions", "{\"client_id\":\"app-1\"}", TOKEN);
        assertThat(r.statusCode()).as(r.body()).isEqualTo(201);
        assertThat(post(client(null), "/v1/sessions", "{\"client_id\":\"app-1\"}", null).statusCode()).isEqualTo(401);
    }
}
