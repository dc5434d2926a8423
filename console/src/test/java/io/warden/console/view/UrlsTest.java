package io.warden.console.view;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class UrlsTest {
    @Test
    void lock_keepsSlashes_andEncodesSegments() {
        assertThat(Urls.lock("payments/invoice-42")).isEqualTo("/console/locks/payments/invoice-42");
        assertThat(Urls.lock("default/user:42")).isEqualTo("/console/locks/default/user%3A42");
        assertThat(Urls.lock("a/b c+d")).isEqualTo("/console/locks/a/b%20c%2Bd");
    }

    @Test
    void query_skipsEmptyValues_andEncodes() {
        assertThat(Urls.sessions(null, "")).isEqualTo("/console/sessions");
        assertThat(Urls.sessions("payments", "a&b")).isEqualTo("/console/sessions?ns=payments&client=a%26b");
        assertThat(Urls.namespace("payments", "payments/inv", null, LockListing.DEFAULT_LIMIT))
                .isEqualTo("/console/ns/payments?prefix=payments%2Finv");
        assertThat(Urls.forceRelease("payments/x", 16)).isEqualTo("/console/actions/force-release?name=payments%2Fx&token=16");
    }
}
