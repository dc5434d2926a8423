package io.warden.service.zk;

import io.warden.service.config.WardenConfig;
import io.warden.service.config.ZkAcl;
import org.apache.curator.framework.api.ACLProvider;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.client.ZKClientConfig;
import org.apache.zookeeper.common.ClientX509Util;
import org.apache.zookeeper.common.SSLContextAndOptions;
import org.apache.zookeeper.common.X509Exception;
import org.apache.zookeeper.data.ACL;

import java.io.IOException;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import javax.security.auth.login.AppConfigurationEntry;
import javax.security.auth.login.Configuration;

/**
 * How a gateway authenticates to ZooKeeper and protects the cell's nodes there, from the
 * {@code zk-tls-*}, {@code zk-sasl-*} and {@code zk-acl} settings, instead of raw {@code -Dzookeeper.*} flags and a
 * JAAS file:
 * <ul>
 *   <li><b>TLS</b> ({@code zk-tls-truststore}, optionally {@code zk-tls-keystore} for servers with
 *       {@code ssl.clientAuth=need}): the Netty client socket with {@code zookeeper.client.secure}, key and trust stores
 *       of any type ZooKeeper reads (PEM, PKCS12, JKS: told by the extension), passwords from files
 *       ({@code passwordPath}, so they are never in the process's arguments or properties).</li>
 *   <li><b>SASL</b> DIGEST-MD5 ({@code zk-sasl-user}, {@code zk-sasl-password-file}): a JAAS login section of this
 *       gateway's own, served by a process-wide {@link Configuration} that delegates every other section to the one
 *       the JVM had (so a {@code -Djava.security.auth.login.config} file keeps working for everything else), and
 *       ZooKeeper's FIPS mode off for this client only (3.9 refuses DIGEST-MD5 in FIPS mode; zk-config's
 *       {@code sasl/zoo-sasl.cfg} explains).</li>
 *   <li><b>ACLs</b> ({@code zk-acl}): the ACL of every node the gateway makes (Curator's {@link ACLProvider}: creates,
 *       transactions, the namespace, recipes). {@code auto} is {@code sasl:USER:cdrwa} with a SASL login, so that
 *       another ZooKeeper identity, authenticated or not, can neither read the cell nor change it, and
 *       {@code world:anyone:cdrwa} (ZooKeeper's default, today's behaviour) without one.</li>
 * </ul>
 *
 * <p>Concurrency: immutable once made, except the process-wide JAAS section table ({@link Sections}), a concurrent
 * map with one entry per open gateway of this JVM (tests run several), removed by {@link #close}.
 */
public final class ZkSecurity implements AutoCloseable {
    /** The schemes ZooKeeper ships authentication providers for; a comma before any other text is part of an id. */
    private static final AtomicInteger SECTION_NUMBER = new AtomicInteger();

    private final WardenConfig config;
    private final List<ACL> acl;
    /** This gateway's JAAS section, or null without a SASL login of its own. */
    private final String jaasSection;

    private ZkSecurity(WardenConfig config, List<ACL> acl, String jaasSection) {
        this.config = config;
        this.acl = acl;
        this.jaasSection = jaasSection;
    }

    /**
     * The security of {@code config}'s ZooKeeper connection; reads the SASL password file now.
     *
     * @throws IllegalArgumentException naming the setting when a file cannot be read or the ACL is malformed
     */
    public static ZkSecurity of(WardenConfig config) {
        List<ACL> acl = ZkAcl.parse(config.zkAcl(), config.zkSaslUser());
        String section = null;
        if (config.zkSaslUser() != null) {
            String password = readSecret(config.zkSaslPasswordFile(), "zk-sasl-password-file");
            section = "WardenZooKeeperClient-" + SECTION_NUMBER.incrementAndGet();
            Sections.INSTANCE.put(section, new AppConfigurationEntry[] {new AppConfigurationEntry(
                    "org.apache.zookeeper.server.auth.DigestLoginModule",
                    AppConfigurationEntry.LoginModuleControlFlag.REQUIRED,
                    Map.of("username", config.zkSaslUser(), "password", password))});
        }
        return new ZkSecurity(config, acl, section);
    }

    /**
     * Checks that the SASL password file {@link #of} would read has a password (the ACL is checked when the setting is
     * parsed, {@link ZkAcl#parse}).
     *
     * @throws IllegalArgumentException saying what is wrong
     */
    public static void checkPassword(WardenConfig config) {
        if (config.zkSaslUser() != null) {
            readSecret(config.zkSaslPasswordFile(), "zk-sasl-password-file");
        }
    }

    /**
     * Checks that the key and trust stores load with their passwords, without installing anything.
     *
     * @throws IllegalArgumentException saying what is wrong
     */
    public static void checkStores(WardenConfig config) {
        ZkSecurity probe = new ZkSecurity(config, ZooDefs.Ids.OPEN_ACL_UNSAFE, null);
        if (probe.tls()) {
            probe.probeSockets();
        }
    }

    /** Whether the gateway talks TLS to ZooKeeper. */
    public boolean tls() {
        return config.zkTlsTruststore() != null;
    }

    /** The ACL of every node the gateway makes. */
    public List<ACL> acl() {
        return acl;
    }

    /** Curator's view of {@link #acl()}: the same list for every path. */
    public ACLProvider aclProvider() {
        return new ACLProvider() {
            @Override
            public List<ACL> getDefaultAcl() {
                return acl;
            }

            @Override
            public List<ACL> getAclForPath(String path) {
                return acl;
            }
        };
    }

    /**
     * A new client configuration for Curator's ZooKeeper handles: system properties as ZooKeeper reads them, then these
     * settings over them. {@code jute.maxbuffer}, the largest reply the client accepts, is {@code zk-max-packet-bytes}
     * ({@link PacketLimit}): a reply over it would cost the gateway its connection.
     */
    public ZKClientConfig clientConfig() {
        ZKClientConfig c = new ZKClientConfig();
        c.setProperty(ZKClientConfig.JUTE_MAXBUFFER, Integer.toString(config.zkMaxPacketBytes()));
        if (tls()) {
            c.setProperty(ZKClientConfig.SECURE_CLIENT, "true");
            c.setProperty(ZKClientConfig.ZOOKEEPER_CLIENT_CNXN_SOCKET, "org.apache.zookeeper.ClientCnxnSocketNetty");
            try (ClientX509Util x509 = new ClientX509Util()) {
                c.setProperty(x509.getSslTruststoreLocationProperty(), config.zkTlsTruststore().toString());
                c.setProperty(x509.getSslTruststoreTypeProperty(), storeType(config.zkTlsTruststore()));
                if (config.zkTlsTruststorePasswordFile() != null) {
                    c.setProperty(x509.getSslTruststorePasswdPathProperty(), config.zkTlsTruststorePasswordFile().toString());
                }
                if (config.zkTlsKeystore() != null) {
                    c.setProperty(x509.getSslKeystoreLocationProperty(), config.zkTlsKeystore().toString());
                    c.setProperty(x509.getSslKeystoreTypeProperty(), storeType(config.zkTlsKeystore()));
                    if (config.zkTlsKeystorePasswordFile() != null) {
                        c.setProperty(x509.getSslKeystorePasswdPathProperty(), config.zkTlsKeystorePasswordFile().toString());
                    }
                }
                c.setProperty(x509.getSslHostnameVerificationEnabledProperty(),
                        Boolean.toString(config.zkTlsHostnameVerification()));
            }
        }
        if (jaasSection != null) {
            c.setProperty(ZKClientConfig.ENABLE_CLIENT_SASL_KEY, "true");
            c.setProperty(ZKClientConfig.LOGIN_CONTEXT_NAME_KEY, jaasSection);
            c.setProperty(org.apache.zookeeper.common.X509Util.FIPS_MODE_PROPERTY, "false");
        }
        return c;
    }

    /**
     * Makes sockets to ZooKeeper servers' client ports for four-letter words (the console's health panel): plain, or
     * TLS with this gateway's stores (a TLS-only server answers {@code srvr} on its secure port, after the handshake).
     *
     * @throws IllegalArgumentException when the stores cannot be loaded
     */
    public SocketMaker probeSockets() {
        if (!tls()) {
            return Socket::new;
        }
        try (ClientX509Util x509 = new ClientX509Util()) {
            SSLContextAndOptions ssl = x509.createSSLContextAndOptions(clientConfig());
            return ssl::createSSLSocket;
        } catch (X509Exception.SSLContextException e) {
            StringBuilder why = new StringBuilder(String.valueOf(e.getMessage()));
            for (Throwable t = e.getCause(); t != null && t != t.getCause(); t = t.getCause()) {
                why.append(": ").append(t.getMessage() != null ? t.getMessage() : t.getClass().getSimpleName());
            }
            throw new IllegalArgumentException("zk-tls: " + why, e);
        }
    }

    /**
     * The store type of a file by its extension, in any case: said outright, because ZooKeeper's own guess knows only
     * the lower-case {@code .jks}, {@code .pem}, {@code .p12} and {@code .bcfks} (a {@code .pfx} or {@code .P12} failed
     * to load with "unable to auto-detect store file type").
     */
    static String storeType(Path file) {
        String name = file.getFileName().toString().toLowerCase(Locale.ROOT);
        return name.endsWith(".pem") ? "PEM" : name.endsWith(".jks") ? "JKS" : "PKCS12";
    }

    /** Makes an unconnected socket. */
    @FunctionalInterface
    public interface SocketMaker {
        Socket make() throws IOException;
    }

    /** One line for the start-up log: how this gateway talks to ZooKeeper, without secrets. */
    public String describe() {
        String transport = !tls() ? "plain TCP" : "TLS (trust store " + config.zkTlsTruststore()
                + (config.zkTlsKeystore() != null ? ", client certificate " + config.zkTlsKeystore() : ", no client certificate")
                + (config.zkTlsHostnameVerification() ? "" : ", host names not verified") + ")";
        String login = jaasSection != null ? "SASL DIGEST-MD5 as " + config.zkSaslUser() : "no SASL login of its own";
        return transport + ", " + login + ", ACL " + describeAcl(acl);
    }

    /** {@code scheme:id:perms,...}, as zkCli's setAcl takes it. */
    public static String describeAcl(List<ACL> acl) {
        List<String> out = new ArrayList<>();
        for (ACL a : acl) {
            out.add(a.getId().getScheme() + ":" + a.getId().getId() + ":" + perms(a.getPerms()));
        }
        return String.join(",", out);
    }

    private static String perms(int p) {
        StringBuilder s = new StringBuilder();
        if ((p & ZooDefs.Perms.CREATE) != 0) s.append('c');
        if ((p & ZooDefs.Perms.DELETE) != 0) s.append('d');
        if ((p & ZooDefs.Perms.READ) != 0) s.append('r');
        if ((p & ZooDefs.Perms.WRITE) != 0) s.append('w');
        if ((p & ZooDefs.Perms.ADMIN) != 0) s.append('a');
        return s.toString();
    }

    /** The first line of a secret file, without its line end; one clear message when there is none. */
    static String readSecret(Path file, String setting) {
        if (file == null) {
            throw new IllegalArgumentException(setting + " is not set");
        }
        String text;
        try {
            text = Files.readString(file, StandardCharsets.UTF_8);
        } catch (IOException | RuntimeException e) {
            throw new IllegalArgumentException(setting + " " + file + " cannot be read (" + e.getClass().getSimpleName() + ")");
        }
        String line = text.lines().findFirst().orElse("");
        if (line.isEmpty()) {
            throw new IllegalArgumentException(setting + " " + file + " is empty");
        }
        return line;
    }

    @Override
    public void close() {
        if (jaasSection != null) {
            Sections.INSTANCE.remove(jaasSection);
        }
    }

    /**
     * The JVM's JAAS configuration while gateways run here: their own sections, and every other name answered by the
     * configuration the JVM had when the first was installed.
     */
    private static final class Sections extends Configuration {
        static final Sections INSTANCE = install();
        private final Map<String, AppConfigurationEntry[]> own = new ConcurrentHashMap<>();
        private final Configuration previous;

        private Sections(Configuration previous) {
            this.previous = previous;
        }

        private static Sections install() {
            Configuration before;
            try {
                before = Configuration.getConfiguration();
            } catch (SecurityException e) {
                before = null; // e.g. a java.security.auth.login.config that does not exist: no other sections then
            }
            Sections s = new Sections(before);
            Configuration.setConfiguration(s);
            return s;
        }

        void put(String name, AppConfigurationEntry[] entries) {
            own.put(name, entries);
        }

        void remove(String name) {
            own.remove(name);
        }

        @Override
        public AppConfigurationEntry[] getAppConfigurationEntry(String name) {
            AppConfigurationEntry[] mine = own.get(name);
            return mine != null ? mine : previous != null ? previous.getAppConfigurationEntry(name) : null;
        }

        @Override
        public void refresh() {
            if (previous != null) {
                previous.refresh();
            }
        }
    }
}
