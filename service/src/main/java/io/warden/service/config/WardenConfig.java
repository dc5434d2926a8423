package io.warden.service.config;

import java.nio.file.Path;
import java.time.Duration;

/**
 * Every setting of a gateway, with the defaults of docs/configuration.md. Each field has a flag
 * ({@code --http-port}), an environment variable ({@code WARDEN_HTTP_PORT}) and a YAML key
 * ({@code http-port}); see {@link ConfigLoader} and docs/configuration.md.
 *
 * <p>The record itself does not validate (tests build odd configurations on purpose);
 * {@link ConfigLoader} validates everything that comes from outside the process.
 *
 * @param httpHost              address the HTTP API binds to
 * @param httpPort              HTTP port (0 = any free port)
 * @param zkConnect             ZooKeeper connect string, or null to start the embedded server
 * @param chroot                the cell's chroot, e.g. {@code /warden}
 * @param dataDir               the gateway's own data: its high-water marks of cells ({@code <dataDir>/high-water}), and
 *                              the embedded ZooKeeper's data ({@code <dataDir>/zookeeper})
 * @param embeddedZkPort        client port of the embedded ZooKeeper (0 = any free port)
 * @param zkSessionTimeout      the gateway's own ZooKeeper session timeout
 * @param zkConnectionTimeout   Curator's connection timeout
 * @param sessionTtlMin         smallest Warden session TTL granted (smaller requests are clamped up)
 * @param sessionTtlMax         largest Warden session TTL granted (larger requests are clamped down)
 * @param sessionTtlDefault     TTL of a session opened without {@code ttl_ms}
 * @param maxRequestsPerSession holds plus queued requests per session
 * @param maxWaitersPerLock     queued requests per lock name
 * @param maxEntriesPerLock     holders plus queued requests per lock name, entries of other ZooKeeper clients on the same
 *                              node included: what one lock's listing may hold
 * @param maxSessionsPerGateway sessions tracked by one gateway
 * @param leaseNamespace        namespace of the simple lease API ({@code /lock/...})
 * @param drainTimeout          how long SIGTERM waits for held calls before stopping
 * @param maxBodyBytes          largest accepted HTTP request body
 * @param gatewayId             this gateway's id, or null to generate one
 * @param advertiseHost         the host other gateways reach this one at, or null to derive it
 * @param consoleAdminToken     the console's admin credential, or null for a read-only console
 * @param watchBufferBytes      what all watch streams together may hold queued, in bytes; 0 = an eighth of the heap
 * @param maxWatches            watch streams ({@code GET /v1/watch}) of names or prefixes one gateway serves; a session's
 *                              own watch ({@code session_id=} alone) counts against max-sessions-per-gateway instead
 * @param authFile              the principals and their grants (YAML), or null for open mode (no authentication)
 * @param metricsAuth           whether {@code GET /metrics} needs credentials too (only with an auth file)
 * @param maxSessionsPerPrincipal sessions one principal (in open mode one client address) may have on one gateway
 * @param maxRequestsPerPrincipal holds plus queued requests one principal (in open mode one client address, the opener
 *                              of the session) may have made through one gateway and not yet ended
 * @param tlsCert               PEM certificate chain of the HTTPS listener, or null to serve plain HTTP
 * @param tlsKey                its PEM (PKCS#8) private key
 * @param tlsClientCa           PEM CA certificates that client certificates (mTLS) are verified against, or null
 * @param tlsClientPrincipal    which name of a verified client certificate names the principal: cn, dns, uri or email
 * @param allowedHosts          what a request's {@code Host} may name ({@code *} = any, {@code *.domain}), or null for
 *                              the default: loopback, this machine's names and addresses, httpHost, advertiseHost
 * @param allowedOrigins        web origins besides the gateway's own that may call it ({@code *} = any), or null for none
 * @param maxConnectionsPerIp   open HTTP connections (including WebSockets and held calls) one client address may have;
 *                              past it a new connection is closed unanswered
 * @param httpThreads           the most threads the HTTP server runs requests on; held calls and watch streams hold none
 * @param bodyReadTimeout       how long a request's body may take to arrive once its headers have; past it, 408
 * @param zkTlsTruststore       the CA certificates ZooKeeper servers' certificates are checked against (PEM, PKCS12 or
 *                              JKS); set = connect to ZooKeeper over TLS
 * @param zkTlsTruststorePasswordFile a file holding the trust store's password, or null (PEM)
 * @param zkTlsKeystore         the gateway's client key and certificate for ZooKeeper (PEM, PKCS12 or JKS), or null
 * @param zkTlsKeystorePasswordFile a file holding the key store's password, or null
 * @param zkTlsHostnameVerification whether a ZooKeeper server's certificate must name the host connected to
 * @param zkSaslUser            the SASL (DIGEST-MD5) user the gateway logs in to ZooKeeper as, or null for none
 * @param zkSaslPasswordFile    a file holding that user's password
 * @param zkAcl                 the ACL of every node the gateway makes ({@code auto}, {@code open}, or a list of
 *                              {@code scheme:id:perms}; see {@link ZkAcl})
 * @param zkMaxPacketBytes      the largest ZooKeeper reply the gateway's client accepts (its {@code jute.maxbuffer}); a
 *                              lock whose listing would take more than half of it is not listed
 * @param watchMirrorBytes      what the watch mirror may take of the heap, estimated, in bytes; 0 = half the heap
 * @param cells                 the cells besides the default one (the ensemble of zkConnect under chroot), each with its
 *                              own ensemble and chroot (a null chroot: this chroot); empty for none
 * @param routes                which cell serves each namespace (namespace to cell name, {@code default} for the default
 *                              cell), sorted by namespace; a namespace not in it is served by the default cell
 */
public record WardenConfig(
        String httpHost,
        int httpPort,
        String zkConnect,
        String chroot,
        Path dataDir,
        int embeddedZkPort,
        Duration zkSessionTimeout,
        Duration zkConnectionTimeout,
        Duration sessionTtlMin,
        Duration sessionTtlMax,
        Duration sessionTtlDefault,
        int maxRequestsPerSession,
        int maxWaitersPerLock,
        int maxEntriesPerLock,
        int maxSessionsPerGateway,
        String leaseNamespace,
        Duration drainTimeout,
        int maxBodyBytes,
        String gatewayId,
        String advertiseHost,
        String consoleAdminToken,
        long watchBufferBytes,
        int maxWatches,
        Path authFile,
        boolean metricsAuth,
        int maxSessionsPerPrincipal,
        int maxRequestsPerPrincipal,
        Path tlsCert,
        Path tlsKey,
        Path tlsClientCa,
        String tlsClientPrincipal,
        java.util.List<String> allowedHosts,
        java.util.List<String> allowedOrigins,
        int maxConnectionsPerIp,
        int httpThreads,
        Duration bodyReadTimeout,
        Path zkTlsTruststore,
        Path zkTlsTruststorePasswordFile,
        Path zkTlsKeystore,
        Path zkTlsKeystorePasswordFile,
        boolean zkTlsHostnameVerification,
        String zkSaslUser,
        Path zkSaslPasswordFile,
        String zkAcl,
        int zkMaxPacketBytes,
        long watchMirrorBytes,
        java.util.List<CellAddress> cells,
        java.util.Map<String, String> routes) {

    /** As a record prints itself, but never with the admin token. */
    @Override
    public String toString() {
        return "WardenConfig[httpHost=" + httpHost + ", httpPort=" + httpPort + ", zkConnect=" + zkConnect + ", chroot="
                + chroot + ", dataDir=" + dataDir + ", embeddedZkPort=" + embeddedZkPort + ", zkSessionTimeout="
                + zkSessionTimeout + ", zkConnectionTimeout=" + zkConnectionTimeout + ", sessionTtlMin=" + sessionTtlMin
                + ", sessionTtlMax=" + sessionTtlMax + ", sessionTtlDefault=" + sessionTtlDefault
                + ", maxRequestsPerSession=" + maxRequestsPerSession + ", maxWaitersPerLock=" + maxWaitersPerLock
                + ", maxEntriesPerLock=" + maxEntriesPerLock + ", maxSessionsPerGateway=" + maxSessionsPerGateway + ", leaseNamespace=" + leaseNamespace
                + ", drainTimeout=" + drainTimeout + ", maxBodyBytes=" + maxBodyBytes + ", gatewayId=" + gatewayId
                + ", advertiseHost=" + advertiseHost + ", consoleAdminToken=" + (consoleAdminToken == null ? "(unset)" : "(set, hidden)")
                + ", watchBufferBytes=" + watchBufferBytes + ", maxWatches=" + maxWatches + ", authFile=" + authFile
                + ", metricsAuth=" + metricsAuth + ", maxSessionsPerPrincipal=" + maxSessionsPerPrincipal
                + ", maxRequestsPerPrincipal=" + maxRequestsPerPrincipal + ", tlsCert=" + tlsCert + ", tlsKey=" + tlsKey
                + ", tlsClientCa=" + tlsClientCa + ", tlsClientPrincipal=" + tlsClientPrincipal + ", allowedHosts=" + allowedHosts
                + ", allowedOrigins=" + allowedOrigins + ", maxConnectionsPerIp=" + maxConnectionsPerIp
                + ", httpThreads=" + httpThreads
                + ", bodyReadTimeout=" + bodyReadTimeout + ", zkTlsTruststore=" + zkTlsTruststore
                + ", zkTlsTruststorePasswordFile=" + zkTlsTruststorePasswordFile + ", zkTlsKeystore=" + zkTlsKeystore
                + ", zkTlsKeystorePasswordFile=" + zkTlsKeystorePasswordFile + ", zkTlsHostnameVerification="
                + zkTlsHostnameVerification + ", zkSaslUser=" + zkSaslUser + ", zkSaslPasswordFile=" + zkSaslPasswordFile
                + ", zkAcl=" + zkAcl + ", zkMaxPacketBytes=" + zkMaxPacketBytes + ", watchMirrorBytes=" + watchMirrorBytes
                + ", cells=" + cells + ", routes=" + routes + "]";
    }

    /**
     * The default of max-entries-per-lock, derived from ZooKeeper's packet limit. A lock's queue is listed in one
     * {@code getChildren} reply, and every client of the lock lists it: Warden's gateways, the SDK's direct mode, plain
     * Curator {@code InterProcessReadWriteLock}s on the same node. A queue node costs 62 bytes in that reply (a 4-byte
     * length and a 58-character name, {@code _c_<uuid>-__READ__<10 digits>}), so a client with ZooKeeper's default
     * {@code jute.maxbuffer} (1,048,575 bytes) fails at (1,048,575 - 1,024 for the reply's header and stat) / 62 =
     * 16,896 entries, and loses its connection doing so. Warden admits 10,000: a 620 KB listing, 59 % of the packet,
     * leaving about 6,900 entries (41 %) for nodes Warden never admitted (other Curator clients on the node) and for
     * acquires racing the check. It is also the most allowed: a larger bound would let Warden alone fill the packet.
     */
    public static final int DEFAULT_MAX_ENTRIES_PER_LOCK = 10_000;
    /**
     * The default of zk-max-packet-bytes: 4 MiB, four times ZooKeeper's default. The gateway lists a lock only when the
     * listing fits in half of it (33,800 entries), so a lock Warden admitted (at most 10,000 entries) is always read,
     * and a reply larger than expected (a lock grown meanwhile, longer foreign node names) still arrives instead of
     * costing the gateway its ZooKeeper connection.
     */
    public static final int DEFAULT_ZK_MAX_PACKET_BYTES = 4 * 1024 * 1024;

    /**
     * The default of http-threads. A request runs on a thread only while the gateway decides it (parse, check, hand to
     * the engine, write the answer); a held acquire, a watch stream and an idle WebSocket hold none. On a gateway of a
     * few cores, 32 threads keep every core busy with room for a request that waits on a bounded ZooKeeper read (a
     * watch of a session this gateway does not track), and keep the count of threads flat however many calls are held.
     */
    public static final int DEFAULT_HTTP_THREADS = 32;

    public static WardenConfig defaults() {
        return new WardenConfig(
                "0.0.0.0",
                7070,
                null,
                "/warden",
                Path.of("data"),
                2181,
                Duration.ofSeconds(10),
                Duration.ofMillis(1500),
                Duration.ofSeconds(2),
                Duration.ofSeconds(120),
                Duration.ofSeconds(10),
                1000,
                10_000,
                DEFAULT_MAX_ENTRIES_PER_LOCK,
                100_000,
                "default",
                Duration.ofSeconds(10),
                64 * 1024,
                null,
                null,
                null,
                0L,
                10_000,
                null,
                false,
                10_000,
                100_000,
                null,
                null,
                null,
                "cn",
                null,
                null,
                1024,
                DEFAULT_HTTP_THREADS,
                Duration.ofSeconds(10),
                null,
                null,
                null,
                null,
                true,
                null,
                null,
                "auto",
                DEFAULT_ZK_MAX_PACKET_BYTES,
                0L,
                java.util.List.of(),
                java.util.Map.of());
    }

    public WardenConfig withZkConnect(String value) {
        return toBuilder().zkConnect(value).build();
    }

    public WardenConfig withHttpPort(int value) {
        return toBuilder().httpPort(value).build();
    }

    public WardenConfig withLimits(int requestsPerSession, int waitersPerLock, int sessionsPerGateway) {
        return toBuilder().maxRequestsPerSession(requestsPerSession).maxWaitersPerLock(waitersPerLock)
                .maxSessionsPerGateway(sessionsPerGateway).build();
    }

    public WardenConfig withMaxEntriesPerLock(int value) {
        return toBuilder().maxEntriesPerLock(value).build();
    }

    public WardenConfig withZkMaxPacketBytes(int value) {
        return toBuilder().zkMaxPacketBytes(value).build();
    }

    public WardenConfig withWatchMirrorBytes(long value) {
        return toBuilder().watchMirrorBytes(value).build();
    }

    public WardenConfig withWatchBufferBytes(long value) {
        return toBuilder().watchBufferBytes(value).build();
    }

    public WardenConfig withZkSessionTimeout(Duration value) {
        return toBuilder().zkSessionTimeout(value).build();
    }

    /** A builder starting from {@link #defaults()}. */
    public static Builder builder() {
        return new Builder(defaults());
    }

    /** A builder starting from this configuration. */
    public Builder toBuilder() {
        return new Builder(this);
    }

    /**
     * Sets settings one by one; {@link #build()} makes the record. No validation here: that is
     * {@link ConfigLoader}'s job. Not thread-safe.
     */
    public static final class Builder {
        private String httpHost;
        private int httpPort;
        private String zkConnect;
        private String chroot;
        private Path dataDir;
        private int embeddedZkPort;
        private Duration zkSessionTimeout;
        private Duration zkConnectionTimeout;
        private Duration sessionTtlMin;
        private Duration sessionTtlMax;
        private Duration sessionTtlDefault;
        private int maxRequestsPerSession;
        private int maxWaitersPerLock;
        private int maxEntriesPerLock;
        private int maxSessionsPerGateway;
        private String advertiseHost;
        private String consoleAdminToken;
        private String leaseNamespace;
        private Duration drainTimeout;
        private int maxBodyBytes;
        private String gatewayId;
        private long watchBufferBytes;
        private int maxWatches;
        private Path authFile;
        private boolean metricsAuth;
        private int maxSessionsPerPrincipal;
        private int maxRequestsPerPrincipal;
        private Path tlsCert;
        private Path tlsKey;
        private Path tlsClientCa;
        private String tlsClientPrincipal;
        private java.util.List<String> allowedHosts;
        private java.util.List<String> allowedOrigins;
        private int maxConnectionsPerIp;
        private int httpThreads;
        private Duration bodyReadTimeout;
        private Path zkTlsTruststore;
        private Path zkTlsTruststorePasswordFile;
        private Path zkTlsKeystore;
        private Path zkTlsKeystorePasswordFile;
        private boolean zkTlsHostnameVerification;
        private String zkSaslUser;
        private Path zkSaslPasswordFile;
        private String zkAcl;
        private int zkMaxPacketBytes;
        private long watchMirrorBytes;
        private java.util.List<CellAddress> cells;
        private java.util.Map<String, String> routes;

        private Builder(WardenConfig c) {
            httpHost = c.httpHost;
            httpPort = c.httpPort;
            zkConnect = c.zkConnect;
            chroot = c.chroot;
            dataDir = c.dataDir;
            embeddedZkPort = c.embeddedZkPort;
            zkSessionTimeout = c.zkSessionTimeout;
            zkConnectionTimeout = c.zkConnectionTimeout;
            sessionTtlMin = c.sessionTtlMin;
            sessionTtlMax = c.sessionTtlMax;
            sessionTtlDefault = c.sessionTtlDefault;
            maxRequestsPerSession = c.maxRequestsPerSession;
            maxWaitersPerLock = c.maxWaitersPerLock;
            maxEntriesPerLock = c.maxEntriesPerLock;
            maxSessionsPerGateway = c.maxSessionsPerGateway;
            leaseNamespace = c.leaseNamespace;
            drainTimeout = c.drainTimeout;
            maxBodyBytes = c.maxBodyBytes;
            gatewayId = c.gatewayId;
            advertiseHost = c.advertiseHost;
            consoleAdminToken = c.consoleAdminToken;
            watchBufferBytes = c.watchBufferBytes;
            maxWatches = c.maxWatches;
            authFile = c.authFile;
            metricsAuth = c.metricsAuth;
            maxSessionsPerPrincipal = c.maxSessionsPerPrincipal;
            maxRequestsPerPrincipal = c.maxRequestsPerPrincipal;
            tlsCert = c.tlsCert;
            tlsKey = c.tlsKey;
            tlsClientCa = c.tlsClientCa;
            tlsClientPrincipal = c.tlsClientPrincipal;
            allowedHosts = c.allowedHosts;
            allowedOrigins = c.allowedOrigins;
            maxConnectionsPerIp = c.maxConnectionsPerIp;
            httpThreads = c.httpThreads;
            bodyReadTimeout = c.bodyReadTimeout;
            zkTlsTruststore = c.zkTlsTruststore;
            zkTlsTruststorePasswordFile = c.zkTlsTruststorePasswordFile;
            zkTlsKeystore = c.zkTlsKeystore;
            zkTlsKeystorePasswordFile = c.zkTlsKeystorePasswordFile;
            zkTlsHostnameVerification = c.zkTlsHostnameVerification;
            zkSaslUser = c.zkSaslUser;
            zkSaslPasswordFile = c.zkSaslPasswordFile;
            zkAcl = c.zkAcl;
            zkMaxPacketBytes = c.zkMaxPacketBytes;
            watchMirrorBytes = c.watchMirrorBytes;
            cells = c.cells;
            routes = c.routes;
        }

        public Builder httpHost(String v) { httpHost = v; return this; }
        public Builder httpPort(int v) { httpPort = v; return this; }
        public Builder zkConnect(String v) { zkConnect = v; return this; }
        public Builder chroot(String v) { chroot = v; return this; }
        public Builder dataDir(Path v) { dataDir = v; return this; }
        public Builder embeddedZkPort(int v) { embeddedZkPort = v; return this; }
        public Builder zkSessionTimeout(Duration v) { zkSessionTimeout = v; return this; }
        public Builder zkConnectionTimeout(Duration v) { zkConnectionTimeout = v; return this; }
        public Builder sessionTtlMin(Duration v) { sessionTtlMin = v; return this; }
        public Builder sessionTtlMax(Duration v) { sessionTtlMax = v; return this; }
        public Builder sessionTtlDefault(Duration v) { sessionTtlDefault = v; return this; }
        public Builder maxRequestsPerSession(int v) { maxRequestsPerSession = v; return this; }
        public Builder maxWaitersPerLock(int v) { maxWaitersPerLock = v; return this; }
        public Builder maxEntriesPerLock(int v) { maxEntriesPerLock = v; return this; }
        public Builder maxSessionsPerGateway(int v) { maxSessionsPerGateway = v; return this; }
        public Builder leaseNamespace(String v) { leaseNamespace = v; return this; }
        public Builder drainTimeout(Duration v) { drainTimeout = v; return this; }
        public Builder maxBodyBytes(int v) { maxBodyBytes = v; return this; }
        public Builder gatewayId(String v) { gatewayId = v; return this; }
        public Builder advertiseHost(String v) { advertiseHost = v; return this; }
        public Builder consoleAdminToken(String v) { consoleAdminToken = v; return this; }
        public Builder watchBufferBytes(long v) { watchBufferBytes = v; return this; }
        public Builder maxWatches(int v) { maxWatches = v; return this; }
        public Builder authFile(Path v) { authFile = v; return this; }
        public Builder metricsAuth(boolean v) { metricsAuth = v; return this; }
        public Builder maxSessionsPerPrincipal(int v) { maxSessionsPerPrincipal = v; return this; }
        public Builder maxRequestsPerPrincipal(int v) { maxRequestsPerPrincipal = v; return this; }
        public Builder tlsCert(Path v) { tlsCert = v; return this; }
        public Builder tlsKey(Path v) { tlsKey = v; return this; }
        public Builder tlsClientCa(Path v) { tlsClientCa = v; return this; }
        public Builder tlsClientPrincipal(String v) { tlsClientPrincipal = v; return this; }
        public Builder allowedHosts(java.util.List<String> v) { allowedHosts = v; return this; }
        public Builder allowedOrigins(java.util.List<String> v) { allowedOrigins = v; return this; }
        public Builder maxConnectionsPerIp(int v) { maxConnectionsPerIp = v; return this; }
        public Builder httpThreads(int v) { httpThreads = v; return this; }
        public Builder bodyReadTimeout(Duration v) { bodyReadTimeout = v; return this; }
        public Builder zkTlsTruststore(Path v) { zkTlsTruststore = v; return this; }
        public Builder zkTlsTruststorePasswordFile(Path v) { zkTlsTruststorePasswordFile = v; return this; }
        public Builder zkTlsKeystore(Path v) { zkTlsKeystore = v; return this; }
        public Builder zkTlsKeystorePasswordFile(Path v) { zkTlsKeystorePasswordFile = v; return this; }
        public Builder zkTlsHostnameVerification(boolean v) { zkTlsHostnameVerification = v; return this; }
        public Builder zkSaslUser(String v) { zkSaslUser = v; return this; }
        public Builder zkSaslPasswordFile(Path v) { zkSaslPasswordFile = v; return this; }
        public Builder zkAcl(String v) { zkAcl = v; return this; }
        public Builder zkMaxPacketBytes(int v) { zkMaxPacketBytes = v; return this; }
        public Builder watchMirrorBytes(long v) { watchMirrorBytes = v; return this; }
        public Builder cells(java.util.List<CellAddress> v) { cells = v; return this; }
        public Builder routes(java.util.Map<String, String> v) { routes = v; return this; }

        public WardenConfig build() {
            return new WardenConfig(httpHost, httpPort, zkConnect, chroot, dataDir, embeddedZkPort, zkSessionTimeout,
                    zkConnectionTimeout, sessionTtlMin, sessionTtlMax, sessionTtlDefault, maxRequestsPerSession,
                    maxWaitersPerLock, maxEntriesPerLock, maxSessionsPerGateway, leaseNamespace, drainTimeout, maxBodyBytes, gatewayId,
                    advertiseHost, consoleAdminToken, watchBufferBytes, maxWatches, authFile, metricsAuth, maxSessionsPerPrincipal,
                    maxRequestsPerPrincipal, tlsCert, tlsKey, tlsClientCa, tlsClientPrincipal, allowedHosts, allowedOrigins,
                    maxConnectionsPerIp, httpThreads, bodyReadTimeout, zkTlsTruststore, zkTlsTruststorePasswordFile, zkTlsKeystore,
                    zkTlsKeystorePasswordFile, zkTlsHostnameVerification, zkSaslUser, zkSaslPasswordFile, zkAcl, zkMaxPacketBytes,
                    watchMirrorBytes, cells, routes);
        }
    }
}
