package io.warden.it.support;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class FencedResourceTest {
    @Test
    void write_higherToken_isAccepted() {
        FencedResource resource = new FencedResource();
        assertThat(resource.write(5, "a")).isTrue();
        assertThat(resource.write(7, "b")).isTrue();
        assertThat(resource.violations()).isEmpty();
        assertThat(resource.holderTokens()).containsExactly(5L, 7L);
    }

    @Test
    void write_sameTokenSameHolder_isAccepted() {
        FencedResource resource = new FencedResource();
        resource.write(5, "a");
        assertThat(resource.write(5, "a")).isTrue();
        assertThat(resource.acceptedWrites()).isEqualTo(2);
    }

    @Test
    void write_sameTokenNewHolder_isRefusedAndRecorded() {
        FencedResource resource = new FencedResource();
        resource.write(5, "a");
        assertThat(resource.write(5, "b")).isFalse();
        assertThat(resource.violations()).hasSize(1);
    }

    @Test
    void write_lowerToken_isRefusedAndRecorded() {
        FencedResource resource = new FencedResource();
        resource.write(9, "a");
        assertThat(resource.write(7, "a")).isFalse();
        assertThat(resource.highestToken()).isEqualTo(9);
        assertThat(resource.violations()).singleElement().asString().contains("token 7");
    }
}
