package io.warden.service.lock;

import io.warden.service.api.LockName;
import io.warden.service.api.WardenException;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class LockNameTest {
    @ParameterizedTest
    @ValueSource(strings = {"payments/invoice-42", "a/b", "ns-1/A.b:c_d-e/x/y/z/1/2/3", "default/user:42"})
    void parse_acceptsContractNames(String name) {
        assertThat(LockName.parse(name).toString()).isEqualTo(name);
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "payments", "payments/", "/payments/x", "Payments/x", "1ns/x", "ns/_hidden", "ns/.dot",
            "ns/a//b", "ns/a/b/c/d/e/f/g/h/i", "ns/sp ace", "ns/ü", "ns/a/../b", "-ns/x"})
    void parse_rejectsBadNames_namingTheField(String name) {
        assertThatThrownBy(() -> LockName.parse(name))
                .isInstanceOf(WardenException.InvalidArgumentException.class)
                .satisfies(e -> assertThat(((WardenException.InvalidArgumentException) e).field()).isEqualTo("name"));
    }

    @org.junit.jupiter.api.Test
    void parse_rejectsOverlongSegmentsAndNames() {
        assertThatThrownBy(() -> LockName.parse("ns/" + "a".repeat(129))).hasMessageContaining("segment");
        String longName = "ns/" + String.join("/", java.util.Collections.nCopies(8, "a".repeat(64)));
        assertThat(longName.length()).isGreaterThan(512);
        assertThatThrownBy(() -> LockName.parse(longName)).hasMessageContaining("512");
        assertThatThrownBy(() -> LockName.parse("resource", "ns/_x"))
                .satisfies(e -> assertThat(((WardenException.InvalidArgumentException) e).field()).isEqualTo("resource"));
    }
}
