package io.warden.console.view;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class LockNamesTest {
    @Test
    void contractNames_areAccepted() {
        assertThat(LockNames.isLockName("payments/invoice-42")).isTrue();
        assertThat(LockNames.isLockName("default/user:42")).isTrue();
        assertThat(LockNames.isLockName("a/b/c/d/e/f/g/h/i")).isTrue(); // 8 segments after the namespace
        assertThat(LockNames.isLockName("ns/" + "x".repeat(128))).isTrue();
    }

    @Test
    void badNames_areRejected() {
        assertThat(LockNames.isLockName("payments")).isFalse();
        assertThat(LockNames.isLockName("Payments/x")).isFalse();
        assertThat(LockNames.isLockName("payments/")).isFalse();
        assertThat(LockNames.isLockName("payments/_hidden")).isFalse();
        assertThat(LockNames.isLockName("payments/.dot")).isFalse();
        assertThat(LockNames.isLockName("payments/a b")).isFalse();
        assertThat(LockNames.isLockName("a/b/c/d/e/f/g/h/i/j")).isFalse();
        assertThat(LockNames.isLockName("ns/" + "x".repeat(129))).isFalse();
        assertThat(LockNames.isLockName(null)).isFalse();
    }

    @Test
    void require_namesTheField() {
        assertThatThrownBy(() -> LockNames.require("name", "nope"))
                .isInstanceOfSatisfying(InvalidInput.class, e -> assertThat(e.field()).isEqualTo("name"))
                .hasMessageStartingWith("name must be a lock name");
    }

    @Test
    void namespaceOf_takesTheFirstSegment() {
        assertThat(LockNames.namespaceOf("payments/invoice-42")).isEqualTo("payments");
        assertThat(LockNames.namespaceOf("payments")).isEqualTo("payments");
    }
}
