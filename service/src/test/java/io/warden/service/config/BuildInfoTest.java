package io.warden.service.config;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class BuildInfoTest {
    @Test
    void unfiltered_resource_is_refused_naming_it() {
        assertThatThrownBy(() -> BuildInfo.read("/io/warden/service/unfiltered-build.properties"))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("unfiltered-build.properties").hasMessageContaining("filtering");
    }

    @Test
    void missing_resource_is_refused_naming_it() {
        assertThatThrownBy(() -> BuildInfo.read("/io/warden/service/no-such.properties"))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("no-such.properties").hasMessageContaining("missing");
    }
}
