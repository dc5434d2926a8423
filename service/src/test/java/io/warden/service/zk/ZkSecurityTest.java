package io.warden.service.zk;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.warden.service.config.WardenConfig;
import java.nio.file.Files;
import java.nio.file.Path;
import javax.security.auth.login.Configuration;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.client.ZKClientConfig;
import org.apache.zookeeper.data.ACL;
import org.apache.zookeeper.data.Id;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The zk-acl syntax and the client configuration the zk-tls-* and zk-sasl-* settings make. That they work against a
 * real TLS and SASL ensemble is {@code SecureZooKeeperIT}'s (integration-tests).
 */
class ZkSecurityTest {
    @TempDir
    Path dir;

    @Test
    void auto_isTheSaslIdentityAlone_withALogin_andOpenWithout() {
        assertThat(io.warden.service.config.ZkAcl.parse("auto", "warden")).containsExactly(new ACL(ZooDefs.Perms.ALL, new Id("sasl", "warden")));
        assertThat(io.warden.service.config.ZkAcl.parse("auto", null)).isEqualTo(ZooDefs.Ids.OPEN_ACL_UNSAFE);
        assertThat(io.warden.service.config.ZkAcl.parse("open", "warden")).isEqualTo(ZooDefs.Ids.OPEN_ACL_UNSAFE);
    }

    @Test
    void aList_keepsTheCommasOfADistinguishedName_andTheColonsOfADigestId() {
        assertThat(io.warden.service.config.ZkAcl.parse("x509:CN=warden-gw,O=Example,C=DE:cdrwa, sasl:operator:r,digest:ops:abc=:rw", null))
                .containsExactly(new ACL(ZooDefs.Perms.ALL, new Id("x509", "CN=warden-gw,O=Example,C=DE")),
                        new ACL(ZooDefs.Perms.READ, new Id("sasl", "operator")),
                        new ACL(ZooDefs.Perms.READ | ZooDefs.Perms.WRITE, new Id("digest", "ops:abc=")));
        assertThat(ZkSecurity.describeAcl(io.warden.service.config.ZkAcl.parse("sasl:warden:cdrwa,ip:10.0.0.0/8:r", null)))
                .isEqualTo("sasl:warden:cdrwa,ip:10.0.0.0/8:r");
    }

    @Test
    void aMalformedList_isRefused_sayingWhy() {
        assertThatThrownBy(() -> io.warden.service.config.ZkAcl.parse("sasl:warden", null)).hasMessageContaining("is not scheme:id:perms");
        assertThatThrownBy(() -> io.warden.service.config.ZkAcl.parse("kerberos:warden:cdrwa", null)).hasMessageContaining("unknown scheme kerberos");
        assertThatThrownBy(() -> io.warden.service.config.ZkAcl.parse("world:everyone:cdrwa", null)).hasMessageContaining("only id is anyone");
        assertThatThrownBy(() -> io.warden.service.config.ZkAcl.parse("sasl:warden:cdrwx", null)).hasMessageContaining("letters of crwda");
        assertThatThrownBy(() -> io.warden.service.config.ZkAcl.parse("sasl:warden:cc", null)).hasMessageContaining("each at most once");
        assertThatThrownBy(() -> io.warden.service.config.ZkAcl.parse("sasl:warden:r", null)).hasMessageContaining("no entry has all of cdrwa");
    }

    @Test
    void tlsAndSasl_makeTheClientConfig_andTheLoginIsThisGatewaysOwnSection() throws Exception {
        Path password = dir.resolve("password");
        Files.writeString(password, "gateway-password\n");
        WardenConfig config = WardenConfig.builder().zkConnect("zk1:2281")
                .zkTlsTruststore(dir.resolve("ca.pem")).zkTlsKeystore(dir.resolve("gw.PFX"))
                .zkTlsKeystorePasswordFile(dir.resolve("gw.pass")).zkTlsHostnameVerification(false)
                .zkSaslUser("warden").zkSaslPasswordFile(password).build();
        try (ZkSecurity security = ZkSecurity.of(config)) {
            ZKClientConfig c = security.clientConfig();
            assertThat(c.getProperty(ZKClientConfig.SECURE_CLIENT)).isEqualTo("true");
            assertThat(c.getProperty(ZKClientConfig.ZOOKEEPER_CLIENT_CNXN_SOCKET)).endsWith("ClientCnxnSocketNetty");
            assertThat(c.getProperty("zookeeper.ssl.trustStore.location")).isEqualTo(dir.resolve("ca.pem").toString());
            assertThat(c.getProperty("zookeeper.ssl.keyStore.location")).isEqualTo(dir.resolve("gw.PFX").toString());
            // Said outright: ZooKeeper's own guess knows neither .pfx nor upper case.
            assertThat(c.getProperty("zookeeper.ssl.keyStore.type")).isEqualTo("PKCS12");
            assertThat(c.getProperty("zookeeper.ssl.trustStore.type")).isEqualTo("PEM");
            assertThat(c.getProperty("zookeeper.ssl.keyStore.passwordPath")).isEqualTo(dir.resolve("gw.pass").toString());
            assertThat(c.getProperty("zookeeper.ssl.hostnameVerification")).isEqualTo("false");
            assertThat(c.getProperty("zookeeper.fips-mode")).isEqualTo("false");
            String section = c.getProperty(ZKClientConfig.LOGIN_CONTEXT_NAME_KEY);
            assertThat(Configuration.getConfiguration().getAppConfigurationEntry(section)).singleElement()
                    .satisfies(e -> {
                        assertThat(e.getOptions().get("username")).isEqualTo("warden");
                        assertThat(e.getOptions().get("password")).isEqualTo("gateway-password");
                    });
            assertThat(security.describe()).contains("SASL DIGEST-MD5 as warden", "ACL sasl:warden:cdrwa")
                    .doesNotContain("gateway-password");
            security.close();
            assertThat(Configuration.getConfiguration().getAppConfigurationEntry(section)).isNull();
        }
    }

    @Test
    void withoutSettings_theClientIsAsBefore() {
        try (ZkSecurity security = ZkSecurity.of(WardenConfig.builder().zkConnect("zk1:2181").build())) {
            ZKClientConfig c = security.clientConfig();
            assertThat(c.getProperty(ZKClientConfig.SECURE_CLIENT)).isNotEqualTo("true");
            assertThat(c.getProperty(ZKClientConfig.LOGIN_CONTEXT_NAME_KEY)).isNull(); // ZooKeeper's default: "Client"
            assertThat(security.acl()).isEqualTo(ZooDefs.Ids.OPEN_ACL_UNSAFE);
            assertThat(security.describe()).isEqualTo("plain TCP, no SASL login of its own, ACL world:anyone:cdrwa");
        }
    }
}
