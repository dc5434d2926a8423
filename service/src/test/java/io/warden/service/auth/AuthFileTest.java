package io.warden.service.auth;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** The auth file's checks: a bad entry is refused with one line naming it; roles are ordered; tokens are hashed. */
class AuthFileTest {
    private static final String TOKEN = "tok-0123456789abcdef";

    private static AuthFile parse(String yaml) {
        return AuthFile.parse("test.yaml", yaml.getBytes(StandardCharsets.UTF_8));
    }

    private static String good() {
        return "principals:\n"
                + "  - name: billing\n    token_sha256: " + AuthFile.sha256(TOKEN) + "\n"
                + "    grants: [{namespace: payments, role: lock}, {namespace: \"*\", role: read}]\n"
                + "  - name: ci.example.com\n    grants: [{namespace: builds, role: admin}]\n";
    }

    @Test
    void aTokenNamesItsPrincipal_byItsSha256_andGrantsAreOrdered() {
        AuthFile f = parse(good());
        Caller billing = f.byToken(TOKEN);
        assertThat(billing.name()).isEqualTo("billing");
        assertThat(billing.may("payments", Role.LOCK)).isTrue();
        assertThat(billing.may("payments", Role.READ)).isTrue();
        assertThat(billing.may("payments", Role.ADMIN)).isFalse();
        assertThat(billing.may("other", Role.READ)).isTrue();
        assertThat(billing.may("other", Role.LOCK)).isFalse();
        assertThat(billing.mayEverywhere(Role.READ)).isTrue();
        assertThat(f.byToken(AuthFile.sha256(TOKEN))).as("the hash itself is no token").isNull();
        assertThat(f.byName("ci.example.com").may("builds", Role.LOCK)).isTrue();
        assertThat(AuthFile.sha256("test")).isEqualTo("9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08");
    }

    @Test
    void badFiles_areRefusedWithOneLineNamingTheEntry() {
        assertRefused("principals: [", "not valid YAML");
        assertRefused("users: []", "unknown key 'users'");
        assertRefused("principals:\n  - name: Billing\n    grants: [{namespace: a, role: read}]\n", "principals[0]: name must match");
        assertRefused("principals:\n  - name: a\n    token_sha256: abc\n    grants: [{namespace: a, role: read}]\n",
                "principals[0] (a): token_sha256 must be 64 hex");
        assertRefused("principals:\n  - name: a\n    grants: []\n", "principals[0] (a): grants must be a non-empty list");
        assertRefused("principals:\n  - name: a\n    grants: [{namespace: a, role: owner}]\n",
                "principals[0] (a): grants[0]: role must be read, lock or admin");
        assertRefused("principals:\n  - name: a\n    grants: [{namespace: A!, role: read}]\n", "grants[0]: namespace must be");
        assertRefused("principals:\n  - name: a\n    grants: [{namespace: a, role: read}]\n"
                + "  - name: a\n    grants: [{namespace: a, role: read}]\n", "principals[1] (a): the name is used");
        String hash = AuthFile.sha256(TOKEN);
        assertRefused("principals:\n  - name: a\n    token_sha256: " + hash + "\n    grants: [{namespace: a, role: read}]\n"
                + "  - name: b\n    token_sha256: " + hash + "\n    grants: [{namespace: a, role: read}]\n",
                "principals[1] (b): token_sha256 is the same as a's");
        assertRefused("principals:\n  - name: a\n    tokn: x\n    grants: [{namespace: a, role: read}]\n",
                "principals[0] (a): unknown key 'tokn'");
    }

    private static void assertRefused(String yaml, String message) {
        assertThatThrownBy(() -> parse(yaml)).isInstanceOf(AuthFileException.class)
                .hasMessageStartingWith("auth file test.yaml: ").hasMessageContaining(message)
                .satisfies(e -> assertThat(e.getMessage()).doesNotContain("\n"));
    }

    @Test
    void openMode_letsEveryoneIn_andAFileModeGatewayWantsCredentials() {
        assertThat(Authenticator.open().authenticate(null, null)).isSameAs(Caller.OPEN);
        assertThat(Caller.OPEN.mayEverywhere(Role.ADMIN)).isTrue();
        assertThat(Caller.OPEN.is(null)).isFalse();
    }

    @Test
    void aSessionWithoutPrincipal_belongsToNobody() {
        Caller billing = parse(good()).byToken(TOKEN);
        assertThat(billing.is(null)).isFalse();
        assertThat(billing.is("billing")).isTrue();
        assertThat(Authenticator.open().authenticate("Bearer x", null)).isSameAs(Caller.OPEN);
    }
}
