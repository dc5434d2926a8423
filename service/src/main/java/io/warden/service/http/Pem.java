package io.warden.service.http;

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
import java.security.cert.CertificateFactory;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collection;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * PEM files as Java key and trust stores, for the gateway's HTTPS (docs/api.md, authorization): a certificate chain,
 * its private key (PKCS#8, {@code BEGIN PRIVATE KEY}: RSA or EC, unencrypted), and CA certificates to verify client
 * certificates with. Failures name the file and say what was expected, in one line.
 */
public final class Pem {
    private static final Pattern KEY = Pattern.compile(
            "-----BEGIN PRIVATE KEY-----([A-Za-z0-9+/=\\s]+)-----END PRIVATE KEY-----");
    static final char[] PASSWORD = "warden".toCharArray(); // in memory only: the stores are never written

    private Pem() {
    }

    /** Every certificate in a PEM file, in order (a chain: leaf first). */
    public static List<Certificate> certificates(Path file) {
        try (InputStream in = Files.newInputStream(file)) {
            Collection<? extends Certificate> certs = CertificateFactory.getInstance("X.509").generateCertificates(in);
            if (certs.isEmpty()) {
                throw new IllegalArgumentException(file + ": no PEM certificate (-----BEGIN CERTIFICATE-----) in it");
            }
            return new ArrayList<>(certs);
        } catch (IOException | GeneralSecurityException e) {
            throw new IllegalArgumentException(file + ": not a PEM certificate file: " + e.getMessage(), e);
        }
    }

    /** The unencrypted PKCS#8 private key in a PEM file. */
    public static PrivateKey privateKey(Path file) {
        String text;
        try {
            text = Files.readString(file, StandardCharsets.US_ASCII);
        } catch (IOException e) {
            throw new IllegalArgumentException(file + ": cannot be read: " + e.getMessage(), e);
        }
        Matcher m = KEY.matcher(text);
        if (!m.find()) {
            throw new IllegalArgumentException(file + ": expected an unencrypted PKCS#8 key (-----BEGIN PRIVATE KEY-----);"
                    + " convert one with: openssl pkcs8 -topk8 -nocrypt -in KEY -out KEY.pk8");
        }
        byte[] der = Base64.getMimeDecoder().decode(m.group(1));
        for (String algorithm : new String[]{"RSA", "EC", "Ed25519"}) {
            try {
                return KeyFactory.getInstance(algorithm).generatePrivate(new PKCS8EncodedKeySpec(der));
            } catch (GeneralSecurityException e) {
                // try the next algorithm
            }
        }
        throw new IllegalArgumentException(file + ": the key is neither RSA, EC nor Ed25519");
    }

    /** A key store holding one key entry: {@code key} with its {@code chain}. */
    public static KeyStore keyStore(Path chain, Path key) {
        try {
            KeyStore ks = KeyStore.getInstance("PKCS12");
            ks.load(null, null);
            ks.setKeyEntry("warden", privateKey(key), PASSWORD, certificates(chain).toArray(Certificate[]::new));
            return ks;
        } catch (IOException | GeneralSecurityException e) {
            throw new IllegalArgumentException(key + " does not go with " + chain + ": " + e.getMessage(), e);
        }
    }

    /** A trust store of the CA certificates in a PEM file. */
    public static KeyStore trustStore(Path cas) {
        try {
            KeyStore ks = KeyStore.getInstance("PKCS12");
            ks.load(null, null);
            int i = 0;
            for (Certificate c : certificates(cas)) {
                ks.setCertificateEntry("ca-" + i++, c);
            }
            return ks;
        } catch (IOException | GeneralSecurityException e) {
            throw new IllegalArgumentException(cas + ": " + e.getMessage(), e);
        }
    }
}
