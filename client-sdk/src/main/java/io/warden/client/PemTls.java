package io.warden.client;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.Certificate;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.Base64;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

/**
 * An {@link SSLContext} from PEM files, for {@link WardenClient.Builder#sslContext} and the CLI's
 * {@code --cacert/--cert/--key}: the CA certificates to trust the gateways by, and for mTLS this client's certificate
 * chain and unencrypted PKCS#8 private key ({@code BEGIN PRIVATE KEY}; RSA, EC or Ed25519).
 *
 * <pre>{@code
 * SSLContext tls = PemTls.sslContext(Path.of("ca.pem"), Path.of("me.pem"), Path.of("me.key"));
 * WardenClient client = WardenClient.builder().endpoints("https://gw1:7070").clientId("app").sslContext(tls).build();
 * }</pre>
 */
public final class PemTls {
    private static final Pattern KEY = Pattern.compile("-----BEGIN PRIVATE KEY-----([A-Za-z0-9+/=\\s]+)-----END PRIVATE KEY-----");
    private static final char[] PASSWORD = "warden-client".toCharArray();

    private PemTls() {
    }

    /**
     * @param ca   PEM CA certificates to trust, or null for the JVM's default trust
     * @param cert PEM certificate chain of this client (leaf first), or null for no client certificate
     * @param key  its private key; given exactly when {@code cert} is
     * @throws IllegalArgumentException naming the file and what is wrong with it
     */
    public static SSLContext sslContext(Path ca, Path cert, Path key) {
        if ((cert == null) != (key == null)) {
            throw new IllegalArgumentException("a client certificate needs its key and the key its certificate");
        }
        try {
            TrustManagerFactory tmf = null;
            if (ca != null) {
                KeyStore trust = KeyStore.getInstance("PKCS12");
                trust.load(null, null);
                int i = 0;
                for (Certificate c : certificates(ca)) {
                    trust.setCertificateEntry("ca-" + i++, c);
                }
                tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
                tmf.init(trust);
            }
            KeyManagerFactory kmf = null;
            if (cert != null) {
                KeyStore keys = KeyStore.getInstance("PKCS12");
                keys.load(null, null);
                keys.setKeyEntry("client", privateKey(key), PASSWORD, certificates(cert).toArray(Certificate[]::new));
                kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
                kmf.init(keys, PASSWORD);
            }
            SSLContext ssl = SSLContext.getInstance("TLS");
            ssl.init(kmf == null ? null : kmf.getKeyManagers(), tmf == null ? null : tmf.getTrustManagers(), null);
            return ssl;
        } catch (IOException | GeneralSecurityException e) {
            throw new IllegalArgumentException("TLS files " + ca + ", " + cert + ", " + key + ": " + e.getMessage(), e);
        }
    }

    private static java.util.Collection<? extends Certificate> certificates(Path file) {
        try (InputStream in = Files.newInputStream(file)) {
            var certs = java.security.cert.CertificateFactory.getInstance("X.509").generateCertificates(in);
            if (certs.isEmpty()) {
                throw new IllegalArgumentException(file + ": no PEM certificate (-----BEGIN CERTIFICATE-----) in it");
            }
            return certs;
        } catch (IOException | GeneralSecurityException e) {
            throw new IllegalArgumentException(file + ": not a PEM certificate file: " + e.getMessage(), e);
        }
    }

    private static PrivateKey privateKey(Path file) {
        String text;
        try {
            text = Files.readString(file, StandardCharsets.US_ASCII);
        } catch (IOException e) {
            throw new IllegalArgumentException(file + ": cannot be read: " + e.getMessage(), e);
        }
        Matcher m = KEY.matcher(text);
        if (!m.find()) {
            throw new IllegalArgumentException(file + ": expected an unencrypted PKCS#8 key (-----BEGIN PRIVATE KEY-----)");
        }
        byte[] der = Base64.getMimeDecoder().decode(m.group(1));
        for (String algorithm : new String[]{"RSA", "EC", "Ed25519"}) {
            try {
                return KeyFactory.getInstance(algorithm).generatePrivate(new PKCS8EncodedKeySpec(der));
            } catch (GeneralSecurityException e) {
                // the next algorithm
            }
        }
        throw new IllegalArgumentException(file + ": the key is neither RSA, EC nor Ed25519");
    }
}
