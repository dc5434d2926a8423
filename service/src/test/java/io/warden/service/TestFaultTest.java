package io.warden.service;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/** The proof suite's deliberate bugs are off unless the JVM names one (issue 11). */
class TestFaultTest {
    @Test
    void offUnlessTheSystemPropertyNamesOne() {
        assertThat(System.getProperty(TestFault.PROPERTY)).isNull();
        assertThat(TestFault.ACTIVE).isEqualTo(TestFault.NONE);
        assertThat(TestFault.parse(null)).isEqualTo(TestFault.NONE);
        assertThat(TestFault.parse(" ")).isEqualTo(TestFault.NONE);
        assertThat(TestFault.parse("GRANT_WITHOUT_CHECK")).isEqualTo(TestFault.GRANT_WITHOUT_CHECK);
        assertThat(TestFault.parse("EXPIRE_AT_HALF_TTL")).isEqualTo(TestFault.EXPIRE_AT_HALF_TTL);
        assertThat(TestFault.parse("TOKEN_OF_LOCK")).isEqualTo(TestFault.TOKEN_OF_LOCK);
        assertThat(TestFault.parse("WAITERS_NEVER_WOKEN")).isEqualTo(TestFault.WAITERS_NEVER_WOKEN);
        assertThat(TestFault.parse("RESUME_FROM_NOW")).isEqualTo(TestFault.RESUME_FROM_NOW);
        assertThatThrownBy(() -> TestFault.parse("grant")).isInstanceOf(IllegalArgumentException.class);
    }
}
