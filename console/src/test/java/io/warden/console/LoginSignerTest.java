package io.warden.console;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;

class LoginSignerTest {
    private static final String TOKEN = "0123456789abcdef-admin";
    private static final Instant NOW = Instant.parse("2026-11-29T10:00:00Z");
    private final LoginSigner signer = new LoginSigner(TOKEN);

    @Test
    void issuedCookie_verifies_untilItExpires() {
        String cookie = signer.issue("jane", NOW.plus(Duration.ofHours(8)));

        assertThat(signer.verify(cookie, NOW)).hasValueSatisfying(login -> {
            assertThat(login.actor()).isEqualTo("jane");
            assertThat(login.expires()).isEqualTo(NOW.plus(Duration.ofHours(8)));
        });
        assertThat(signer.verify(cookie, NOW.plus(Duration.ofHours(8)))).isEmpty();
        assertThat(cookie).matches("[A-Za-z0-9_.-]+"); // safe in a cookie without quoting
    }

    @Test
    void anotherGatewayWithTheSameToken_acceptsIt_anotherTokenDoesNot() {
        String cookie = signer.issue("jane", NOW.plusSeconds(60));
        assertThat(new LoginSigner(TOKEN).verify(cookie, NOW)).isPresent();
        assertThat(new LoginSigner(TOKEN + "x").verify(cookie, NOW)).isEmpty();
    }

    @Test
    void tamperedCookies_areRejected() {
        String cookie = signer.issue("jane", NOW.plusSeconds(60));
        String[] parts = cookie.split("\\.");
        String otherActor = java.util.Base64.getUrlEncoder().withoutPadding().encodeToString("root".getBytes());

        assertThat(signer.verify(parts[0] + "." + otherActor + "." + parts[2] + "." + parts[3], NOW)).isEmpty();
        assertThat(signer.verify(parts[0] + "." + parts[1] + "." + (Long.parseLong(parts[2]) + 86_400) + "." + parts[3], NOW)).isEmpty();
        assertThat(signer.verify(cookie.substring(0, cookie.length() - 1) + (cookie.endsWith("A") ? "B" : "A"), NOW)).isEmpty();
        assertThat(signer.verify("", NOW)).isEmpty();
        assertThat(signer.verify("garbage", NOW)).isEmpty();
        assertThat(signer.verify("v1.x.y.z", NOW)).isEmpty();
        assertThat(signer.verify(null, NOW)).isEmpty();
        assertThat(signer.verify("x".repeat(5000), NOW)).isEmpty();
    }

    @Test
    void actorNames_roundTrip_whateverTheirCharacters() {
        String actor = "Jürgen <ops>.on-call \"#1\"";
        assertThat(signer.verify(signer.issue(actor, NOW.plusSeconds(60)), NOW))
                .hasValueSatisfying(l -> assertThat(l.actor()).isEqualTo(actor));
    }

    @Test
    void csrf_isBoundToTheLoginCookie() {
        String cookie = signer.issue("jane", NOW.plusSeconds(60));
        String other = signer.issue("jane", NOW.plusSeconds(61));
        String csrf = signer.csrf(cookie);

        assertThat(signer.csrfMatches(cookie, csrf)).isTrue();
        assertThat(signer.csrfMatches(other, csrf)).isFalse();
        assertThat(signer.csrfMatches(cookie, csrf + "x")).isFalse();
        assertThat(signer.csrfMatches(cookie, "")).isFalse();
        assertThat(signer.csrfMatches(cookie, null)).isFalse();
        assertThat(signer.csrfMatches(null, csrf)).isFalse();
        assertThat(new LoginSigner(TOKEN + "x").csrfMatches(cookie, csrf)).isFalse();
    }

    @Test
    void tokenMatches_onlyTheExactToken() {
        assertThat(signer.tokenMatches(TOKEN)).isTrue();
        assertThat(signer.tokenMatches(TOKEN + " ")).isFalse();
        assertThat(signer.tokenMatches(TOKEN.substring(1))).isFalse();
        assertThat(signer.tokenMatches("")).isFalse();
        assertThat(signer.tokenMatches(null)).isFalse();
    }

    @Test
    void flashMessages_areSigned() {
        String sig = signer.signFlash("done: released");
        assertThat(signer.flashMatches("done: released", sig)).isTrue();
        assertThat(signer.flashMatches("done: released everything", sig)).isFalse();
        assertThat(signer.flashMatches("done: released", null)).isFalse();
    }
}
