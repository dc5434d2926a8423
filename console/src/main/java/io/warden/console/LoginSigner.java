package io.warden.console;

import java.nio.charset.StandardCharsets;
import java.security.InvalidKeyException;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Instant;
import java.util.Base64;
import java.util.Objects;
import java.util.Optional;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * The console's only secrets: checks an admin token in constant time, and signs with HMAC-SHA256 keyed by that
 * token the login cookie ({@code v1.<actor>.<expiry>.<mac>}), the CSRF token derived from it, and flash messages.
 * Every gateway of a cell given the same admin token accepts what any of them signed; changing the token logs
 * everyone out.
 *
 * <p>The signed value is not encrypted: the actor's name is readable in the cookie, which is fine (it is shown on
 * every page anyway).
 *
 * <p>Concurrency: immutable; a {@link Mac} is made per call (they are not thread-safe). Safe from any thread.
 */
final class LoginSigner {
    static final String VERSION = "v1";
    private static final String HMAC = "HmacSHA256";
    private static final Base64.Encoder B64 = Base64.getUrlEncoder().withoutPadding();
    private static final Base64.Decoder B64D = Base64.getUrlDecoder();

    private final SecretKeySpec key;
    private final byte[] tokenDigest;

    LoginSigner(String adminToken) {
        Objects.requireNonNull(adminToken, "adminToken");
        byte[] bytes = adminToken.getBytes(StandardCharsets.UTF_8);
        this.key = new SecretKeySpec(bytes, HMAC);
        this.tokenDigest = sha256(bytes);
    }

    /** A login: who, and until when. */
    record Login(String actor, Instant expires) {
    }

    /**
     * Whether {@code candidate} is the admin token. Both sides are hashed first, so the comparison takes the same
     * time whatever the candidate's length or content.
     */
    boolean tokenMatches(String candidate) {
        if (candidate == null) {
            return false;
        }
        return MessageDigest.isEqual(tokenDigest, sha256(candidate.getBytes(StandardCharsets.UTF_8)));
    }

    /** A cookie value for {@code actor}, valid until {@code expires}. */
    String issue(String actor, Instant expires) {
        String payload = VERSION + "." + B64.encodeToString(actor.getBytes(StandardCharsets.UTF_8)) + "."
                + expires.getEpochSecond();
        return payload + "." + mac("login|" + payload);
    }

    /** The login a cookie value carries, if its signature is ours and it has not expired at {@code now}. */
    Optional<Login> verify(String cookie, Instant now) {
        if (cookie == null || cookie.length() > 1024) {
            return Optional.empty();
        }
        int lastDot = cookie.lastIndexOf('.');
        if (lastDot < 0) {
            return Optional.empty();
        }
        String payload = cookie.substring(0, lastDot);
        if (!equal(mac("login|" + payload), cookie.substring(lastDot + 1))) {
            return Optional.empty();
        }
        String[] parts = payload.split("\\.", -1);
        if (parts.length != 3 || !VERSION.equals(parts[0])) {
            return Optional.empty();
        }
        try {
            Instant expires = Instant.ofEpochSecond(Long.parseLong(parts[2]));
            if (!now.isBefore(expires)) {
                return Optional.empty();
            }
            return Optional.of(new Login(new String(B64D.decode(parts[1]), StandardCharsets.UTF_8), expires));
        } catch (IllegalArgumentException | java.time.DateTimeException e) {
            return Optional.empty(); // signed by us, so never expected; treat as no login
        }
    }

    /** The CSRF token bound to one login cookie: HMAC(adminToken, "csrf|" + cookie). */
    String csrf(String cookie) {
        return mac("csrf|" + cookie);
    }

    /** Whether {@code given} is the CSRF token of {@code cookie}, compared in constant time. */
    boolean csrfMatches(String cookie, String given) {
        return cookie != null && given != null && equal(csrf(cookie), given);
    }

    /** A signature of a flash message, so a crafted link cannot make the console claim an action was done. */
    String signFlash(String message) {
        return mac("flash|" + message);
    }

    boolean flashMatches(String message, String signature) {
        return message != null && signature != null && equal(signFlash(message), signature);
    }

    private String mac(String message) {
        try {
            Mac mac = Mac.getInstance(HMAC);
            mac.init(key);
            return B64.encodeToString(mac.doFinal(message.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException | InvalidKeyException e) {
            throw new IllegalStateException("HmacSHA256 is not available", e); // every JDK has it
        }
    }

    private static boolean equal(String expected, String given) {
        return MessageDigest.isEqual(expected.getBytes(StandardCharsets.US_ASCII),
                given.getBytes(StandardCharsets.US_ASCII));
    }

    private static byte[] sha256(byte[] bytes) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(bytes);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is not available", e);
        }
    }
}
