package io.warden.service.config;

import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;
import java.util.function.BiConsumer;
import java.util.function.Function;
import java.util.regex.Pattern;

/**
 * The table of settings: one row per {@link WardenConfig} component, with its key, environment variable,
 * value kind (how it parses and what it allows), help text and where it goes in the record.
 * The flag is {@code --key}, the YAML key is {@code key}, the environment variable is
 * {@code WARDEN_KEY} in upper snake case (except {@code zk}: {@code WARDEN_ZK_CONNECT}).
 */
enum Setting {
    HTTP_HOST("http-host", Kind.HOST, "address the HTTP API and console bind to",
            WardenConfig::httpHost, (b, v) -> b.httpHost((String) v)),
    HTTP_PORT("http-port", Kind.PORT, "HTTP port of the API and console (0 = any free port)",
            WardenConfig::httpPort, (b, v) -> b.httpPort((Integer) v)),
    ZK("zk", "WARDEN_ZK_CONNECT", Kind.ZK_CONNECT,
            "ZooKeeper ensemble to join, host:port,...; unset = start an embedded ZooKeeper server",
            WardenConfig::zkConnect, (b, v) -> b.zkConnect((String) v)),
    CHROOT("chroot", Kind.CHROOT, "the cell's root node in ZooKeeper; every gateway of a cell uses the same",
            WardenConfig::chroot, (b, v) -> b.chroot((String) v)),
    DATA_DIR("data-dir", Kind.PATH, "the gateway's own data: the highest token it has seen of its cell, in "
            + "<data-dir>/high-water (keep it on a persistent disk); with no --zk also the embedded ZooKeeper's data, in "
            + "<data-dir>/zookeeper",
            WardenConfig::dataDir, (b, v) -> b.dataDir((Path) v)),
    EMBEDDED_ZK_PORT("embedded-zk-port", Kind.PORT,
            "embedded ZooKeeper only: its client port on 127.0.0.1 (0 = any free port)",
            WardenConfig::embeddedZkPort, (b, v) -> b.embeddedZkPort((Integer) v)),
    ZK_SESSION_TIMEOUT_MS("zk-session-timeout-ms", Kind.DURATION_MS,
            "the gateway's own ZooKeeper session timeout: how soon a dead gateway's sessions are adopted",
            WardenConfig::zkSessionTimeout, (b, v) -> b.zkSessionTimeout((Duration) v)),
    ZK_CONNECTION_TIMEOUT_MS("zk-connection-timeout-ms", Kind.DURATION_MS,
            "how long one attempt to connect to ZooKeeper may take",
            WardenConfig::zkConnectionTimeout, (b, v) -> b.zkConnectionTimeout((Duration) v)),
    SESSION_TTL_MIN_MS("session-ttl-min-ms", Kind.DURATION_MS,
            "smallest session TTL granted; a smaller ttl_ms is raised to it",
            WardenConfig::sessionTtlMin, (b, v) -> b.sessionTtlMin((Duration) v)),
    SESSION_TTL_MAX_MS("session-ttl-max-ms", Kind.DURATION_MS,
            "largest session TTL granted; a larger ttl_ms is lowered to it",
            WardenConfig::sessionTtlMax, (b, v) -> b.sessionTtlMax((Duration) v)),
    SESSION_TTL_DEFAULT_MS("session-ttl-default-ms", Kind.DURATION_MS,
            "TTL of a session opened without ttl_ms (min <= default <= max)",
            WardenConfig::sessionTtlDefault, (b, v) -> b.sessionTtlDefault((Duration) v)),
    MAX_REQUESTS_PER_SESSION("max-requests-per-session", Kind.REQUESTS_PER_SESSION,
            "holds plus queued requests one session may have (429 past it)",
            WardenConfig::maxRequestsPerSession, (b, v) -> b.maxRequestsPerSession((Integer) v)),
    MAX_WAITERS_PER_LOCK("max-waiters-per-lock", Kind.WAITERS_PER_LOCK,
            "waiters one lock name may have: queued requests not granted, holders not counted (429 past it)",
            WardenConfig::maxWaitersPerLock, (b, v) -> b.maxWaitersPerLock((Integer) v)),
    MAX_ENTRIES_PER_LOCK("max-entries-per-lock", Kind.ENTRIES_PER_LOCK,
            "holders plus waiters one lock name may have, entries of other ZooKeeper clients on the same node (plain "
                    + "Curator locks) included; an acquire that would pass it, granted at once or not, is refused (429). "
                    + "Keeps every lock's queue listable in one ZooKeeper reply by every client of it",
            WardenConfig::maxEntriesPerLock, (b, v) -> b.maxEntriesPerLock((Integer) v)),
    MAX_SESSIONS_PER_GATEWAY("max-sessions-per-gateway", Kind.POSITIVE_INT,
            "sessions one gateway tracks (429 past it)",
            WardenConfig::maxSessionsPerGateway, (b, v) -> b.maxSessionsPerGateway((Integer) v)),
    LEASE_NAMESPACE("lease-namespace", Kind.NAMESPACE,
            "namespace of the simple lease API (/lock/acquire): resource r is the lock <namespace>/r",
            WardenConfig::leaseNamespace, (b, v) -> b.leaseNamespace((String) v)),
    DRAIN_TIMEOUT_MS("drain-timeout-ms", Kind.DURATION_MS,
            "on SIGTERM, how long held calls may take to be answered before the gateway stops",
            WardenConfig::drainTimeout, (b, v) -> b.drainTimeout((Duration) v)),
    MAX_BODY_BYTES("max-body-bytes", Kind.POSITIVE_INT, "largest HTTP request body accepted (413 past it)",
            WardenConfig::maxBodyBytes, (b, v) -> b.maxBodyBytes((Integer) v)),
    GATEWAY_ID("gateway-id", Kind.GATEWAY_ID,
            "this gateway's id in /gateways; unset = a random one per start",
            WardenConfig::gatewayId, (b, v) -> b.gatewayId((String) v)),
    ADVERTISE_HOST("advertise-host", Kind.HOST,
            "the host name or address other gateways reach this one at (the console asks the tracking gateway for a "
                    + "session's TTL left); unset = http-host, or this machine's name when http-host is 0.0.0.0 or ::",
            WardenConfig::advertiseHost, (b, v) -> b.advertiseHost((String) v)),
    CONSOLE_ADMIN_TOKEN("console-admin-token", Kind.SECRET,
            "the console's admin credential (force-release, expire session); unset = the console is read-only. "
                    + "Give every gateway of a cell the same one; prefer the environment variable or the config file",
            WardenConfig::consoleAdminToken, (b, v) -> b.consoleAdminToken((String) v)),
    WATCH_BUFFER_BYTES("watch-buffer-bytes", Kind.BYTES_OR_AUTO,
            "what all watch streams (GET /v1/watch) together may hold queued for slow clients, in bytes; past it the "
                    + "streams over their share are cut (clients resume). 0 = an eighth of the heap (-Xmx)",
            WardenConfig::watchBufferBytes, (b, v) -> b.watchBufferBytes((Long) v)),
    MAX_WATCHES("max-watches", Kind.POSITIVE_INT,
            "watch streams (GET /v1/watch) of names and prefixes one gateway serves (429 past it); a session's own watch "
                    + "(session_id= alone, what the Java client keeps while it holds locks) counts against "
                    + "max-sessions-per-gateway instead, at most 4 per session",
            WardenConfig::maxWatches, (b, v) -> b.maxWatches((Integer) v)),
    AUTH_FILE("auth-file", Kind.FILE,
            "YAML file of principals (bearer-token SHA-256s, grants per namespace: read < lock < admin); re-read on "
                    + "change and on SIGHUP, a bad file refused keeping the last good one. Unset = open mode: no "
                    + "authentication, everyone may do everything (docs/operations.md, \"Securing a cell\")",
            WardenConfig::authFile, (b, v) -> b.authFile((Path) v)),
    METRICS_AUTH("metrics-auth", Kind.BOOLEAN,
            "with an auth file: GET /metrics needs credentials too (any principal); false = /metrics stays open",
            WardenConfig::metricsAuth, (b, v) -> b.metricsAuth((Boolean) v)),
    MAX_SESSIONS_PER_PRINCIPAL("max-sessions-per-principal", Kind.POSITIVE_INT,
            "sessions one principal (in open mode one client address) may have on one gateway, opened or taken over "
                    + "(429 past it), so that one client cannot fill max-sessions-per-gateway for everyone",
            WardenConfig::maxSessionsPerPrincipal, (b, v) -> b.maxSessionsPerPrincipal((Integer) v)),
    MAX_REQUESTS_PER_PRINCIPAL("max-requests-per-principal", Kind.POSITIVE_INT,
            "holds plus queued requests one principal (in open mode one client address, the session's opener) may "
                    + "have made through one gateway (429 past it), so that one client cannot fill a cell with locks "
                    + "and waiters for everyone",
            WardenConfig::maxRequestsPerPrincipal, (b, v) -> b.maxRequestsPerPrincipal((Integer) v)),
    TLS_CERT("tls-cert", Kind.FILE,
            "PEM certificate chain (leaf first): serve HTTPS (and WSS) instead of HTTP; needs tls-key",
            WardenConfig::tlsCert, (b, v) -> b.tlsCert((Path) v)),
    TLS_KEY("tls-key", Kind.FILE, "the PEM private key of tls-cert (unencrypted PKCS#8, BEGIN PRIVATE KEY)",
            WardenConfig::tlsKey, (b, v) -> b.tlsKey((Path) v)),
    TLS_CLIENT_CA("tls-client-ca", Kind.FILE,
            "PEM CA certificates: a client certificate verified against them names its principal in the auth file (mTLS; "
                    + "clients without a certificate may still use a bearer token); needs tls-cert",
            WardenConfig::tlsClientCa, (b, v) -> b.tlsClientCa((Path) v)),
    TLS_CLIENT_PRINCIPAL("tls-client-principal", Kind.CERT_NAME,
            "which name of a verified client certificate is its principal's: cn (the subject's CN), or the first "
                    + "subject alternative name of kind dns, uri or email",
            WardenConfig::tlsClientPrincipal, (b, v) -> b.tlsClientPrincipal((String) v)),
    ALLOWED_HOSTS("allowed-hosts", Kind.HOST_LIST,
            "names and addresses a request's Host header may give (421 otherwise; a defence against DNS rebinding): "
                    + "a comma list of names, addresses, *.domain for any name under a domain, or * for any; unset = "
                    + "localhost, this machine's names and addresses, http-host and advertise-host",
            WardenConfig::allowedHosts, (b, v) -> b.allowedHosts(castList(v))),
    ALLOWED_ORIGINS("allowed-origins", Kind.ORIGIN_LIST,
            "web origins (scheme://host[:port]) besides the gateway's own whose pages may call it (an Origin header "
                    + "not allowed is a 403): a comma list, or * for any; unset = the gateway's own origin only",
            WardenConfig::allowedOrigins, (b, v) -> b.allowedOrigins(castList(v))),
    MAX_CONNECTIONS_PER_IP("max-connections-per-ip", Kind.POSITIVE_INT,
            "open HTTP connections (held calls and watch streams included) one client address may have; "
                    + "past it a new connection is closed unanswered. Clients behind one NAT or proxy share an address",
            WardenConfig::maxConnectionsPerIp, (b, v) -> b.maxConnectionsPerIp((Integer) v)),
    HTTP_THREADS("http-threads", Kind.HTTP_THREADS,
            "the most threads the HTTP server runs requests on (held acquires, watch streams and idle WebSockets hold "
                    + "none), so the count of threads stays flat however many calls are held",
            WardenConfig::httpThreads, (b, v) -> b.httpThreads((Integer) v)),
    BODY_READ_TIMEOUT_MS("body-read-timeout-ms", Kind.DURATION_MS,
            "how long a request body may take to arrive once the headers have (408 past it); bodies are read without "
                    + "holding a thread, so a slow sender only holds its connection until then",
            WardenConfig::bodyReadTimeout, (b, v) -> b.bodyReadTimeout((Duration) v)),
    ZK_TLS_TRUSTSTORE("zk-tls-truststore", Kind.STORE_FILE,
            "connect to ZooKeeper over TLS (its secureClientPort; name those ports in zk), checking the servers' "
                    + "certificates against the CA certificates in this file: .pem, .p12/.pfx or .jks",
            WardenConfig::zkTlsTruststore, (b, v) -> b.zkTlsTruststore((Path) v)),
    ZK_TLS_TRUSTSTORE_PASSWORD_FILE("zk-tls-truststore-password-file", Kind.FILE,
            "a file holding zk-tls-truststore's password (a .pem needs none)",
            WardenConfig::zkTlsTruststorePasswordFile, (b, v) -> b.zkTlsTruststorePasswordFile((Path) v)),
    ZK_TLS_KEYSTORE("zk-tls-keystore", Kind.STORE_FILE,
            "the gateway's key and certificate chain for ZooKeeper's TLS (ssl.clientAuth=need): one .pem holding both "
                    + "(unencrypted PKCS#8 key), a .p12/.pfx or a .jks; needs zk-tls-truststore",
            WardenConfig::zkTlsKeystore, (b, v) -> b.zkTlsKeystore((Path) v)),
    ZK_TLS_KEYSTORE_PASSWORD_FILE("zk-tls-keystore-password-file", Kind.FILE,
            "a file holding zk-tls-keystore's password",
            WardenConfig::zkTlsKeystorePasswordFile, (b, v) -> b.zkTlsKeystorePasswordFile((Path) v)),
    ZK_TLS_HOSTNAME_VERIFICATION("zk-tls-hostname-verification", Kind.BOOLEAN,
            "a ZooKeeper server's certificate must name the host or address the gateway connects to (subject "
                    + "alternative names); false only for test cells",
            WardenConfig::zkTlsHostnameVerification, (b, v) -> b.zkTlsHostnameVerification((Boolean) v)),
    ZK_SASL_USER("zk-sasl-user", Kind.SASL_USER,
            "log in to ZooKeeper with SASL DIGEST-MD5 as this user (a user_NAME of the servers' JAAS \"Server\" "
                    + "section); needs zk-sasl-password-file. Unset = no SASL login (unless a JAAS file is given the "
                    + "JVM with -Djava.security.auth.login.config)",
            WardenConfig::zkSaslUser, (b, v) -> b.zkSaslUser((String) v)),
    ZK_SASL_PASSWORD_FILE("zk-sasl-password-file", Kind.FILE,
            "a file holding zk-sasl-user's password (one line)",
            WardenConfig::zkSaslPasswordFile, (b, v) -> b.zkSaslPasswordFile((Path) v)),
    ZK_ACL("zk-acl", Kind.ZK_ACL,
            "the ZooKeeper ACL of every node the gateway makes, also set on the chroot and its top nodes at start: "
                    + "auto (with zk-sasl-user: sasl:USER:cdrwa, only the gateways' identity may read or change the "
                    + "cell; else open), open (world:anyone:cdrwa), or a comma list of scheme:id:perms (perms of "
                    + "crwda), e.g. sasl:warden:cdrwa,sasl:operator:r",
            WardenConfig::zkAcl, (b, v) -> b.zkAcl((String) v)),
    ZK_MAX_PACKET_BYTES("zk-max-packet-bytes", Kind.PACKET_BYTES,
            "the largest ZooKeeper reply the gateway's client accepts (its jute.maxbuffer; the servers' own limit "
                    + "applies to requests). A lock whose queue listing would take more than half of it is not read: "
                    + "reads of it answer 429, the rest of the cell is served as usual",
            WardenConfig::zkMaxPacketBytes, (b, v) -> b.zkMaxPacketBytes((Integer) v)),
    WATCH_MIRROR_BYTES("watch-mirror-bytes", Kind.BYTES_OR_AUTO,
            "what the watch mirror (a copy of every lock queue, for GET /v1/watch, the console and the cell metrics) may "
                    + "take of the heap, estimated, in bytes; past it the mirror is dropped and watches wait until the "
                    + "cell fits again. 0 = half the heap (-Xmx)",
            WardenConfig::watchMirrorBytes, (b, v) -> b.watchMirrorBytes((Long) v)),
    CELLS("cells", Kind.CELLS,
            "cells besides the default one (the ensemble of --zk): NAME=HOST:PORT,...[/CHROOT] separated by ';'; a cell "
                    + "without a chroot uses --chroot. Namespaces go to the default cell unless routes names another. "
                    + "Every gateway of a deployment needs the same cells and routes",
            WardenConfig::cells, (b, v) -> b.cells(castCells(v))),
    ROUTES("routes", Kind.ROUTES,
            "which cell serves each namespace at the first start with these cells, NAMESPACE=CELL,...; a namespace not "
                    + "listed is served by the default cell. Once the cells keep routes in ZooKeeper these are not read "
                    + "again: a namespace changes cell only by a move (PUT /v1/namespaces/NS/cell, warden cells move)",
            WardenConfig::routes, (b, v) -> b.routes(castRoutes(v)));

    @SuppressWarnings("unchecked")
    private static java.util.List<String> castList(Object v) {
        return (java.util.List<String>) v;
    }

    @SuppressWarnings("unchecked")
    private static java.util.List<CellAddress> castCells(Object v) {
        return (java.util.List<CellAddress>) v;
    }

    @SuppressWarnings("unchecked")
    private static java.util.Map<String, String> castRoutes(Object v) {
        return (java.util.Map<String, String>) v;
    }

    /** The most cells besides the default one. */
    static final int MAX_CELLS = CellAddress.MAX_CELLS;
    /** The name of the default cell (the ensemble of --zk), in routes; no cell of cells may take it. */
    static final String DEFAULT_CELL = "default";

    /** Longest duration setting, one day: longer than any sensible timeout, far from overflowing anything. */
    static final long MAX_DURATION_MS = 86_400_000L;

    private final String key;
    private final String envVar;
    private final Kind kind;
    private final String help;
    private final Function<WardenConfig, Object> getter;
    private final BiConsumer<WardenConfig.Builder, Object> setter;

    Setting(String key, Kind kind, String help, Function<WardenConfig, Object> getter,
            BiConsumer<WardenConfig.Builder, Object> setter) {
        this(key, "WARDEN_" + key.toUpperCase(Locale.ROOT).replace('-', '_'), kind, help, getter, setter);
    }

    Setting(String key, String envVar, Kind kind, String help, Function<WardenConfig, Object> getter,
            BiConsumer<WardenConfig.Builder, Object> setter) {
        this.key = key;
        this.envVar = envVar;
        this.kind = kind;
        this.help = help;
        this.getter = getter;
        this.setter = setter;
    }

    /** The YAML key, and the flag without its {@code --}. */
    String key() {
        return key;
    }

    String flag() {
        return "--" + key;
    }

    String envVar() {
        return envVar;
    }

    Kind kind() {
        return kind;
    }

    String help() {
        return help;
    }

    /** The value of this setting in {@code config}. */
    Object get(WardenConfig config) {
        return getter.apply(config);
    }

    void set(WardenConfig.Builder builder, Object value) {
        setter.accept(builder, value);
    }

    /** The default, as a person would type it. */
    String defaultText() {
        Object value = get(WardenConfig.defaults());
        if (value == null) {
            return this == ZK ? "(unset: embedded ZooKeeper)" : this == CONSOLE_ADMIN_TOKEN ? "(unset: console read-only)"
                    : this == ADVERTISE_HOST ? "(unset: derived)"
                    : this == AUTH_FILE ? "(unset: open mode)"
                    : this == TLS_CERT || this == TLS_KEY ? "(unset: plain HTTP)"
                    : this == TLS_CLIENT_CA ? "(unset: no client certificates)"
                    : this == ALLOWED_HOSTS ? "(unset: localhost, this machine's names and addresses, http-host, advertise-host)"
                    : this == ALLOWED_ORIGINS ? "(unset: the gateway's own origin only)"
                    : "(unset: generated)";
        }
        String text = kind.render(value);
        return text.isEmpty() ? "(none)" : text; // cells and routes
    }

    static Setting byKey(String key) {
        for (Setting s : values()) {
            if (s.key.equals(key)) {
                return s;
            }
        }
        return null;
    }

    /**
     * A value that is not allowed, saying what is wrong with it (a cell named twice, a namespace routed twice) where
     * {@link Kind#allowed()} alone would leave the reader to find it; the caller puts the reason before what is allowed.
     */
    static final class BadValue extends IllegalArgumentException {
        private static final long serialVersionUID = 1L;

        BadValue(String reason) {
            super(reason);
        }
    }

    /**
     * How a value of a setting is written and what it may be. {@link #parse} throws
     * {@link IllegalArgumentException} when the text is not allowed (a {@link BadValue} says why); the caller turns
     * that into one {@link ConfigException} line with {@link #allowed()}.
     */
    enum Kind {
        HOST("HOST", "a host name or IP address") {
            @Override
            Object parse(String text) {
                require(text.length() <= 253 && HOST_PATTERN.matcher(text).matches());
                return text;
            }
        },
        PORT("PORT", "a port number 0-65535") {
            @Override
            Object parse(String text) {
                return (int) wholeNumber(text, 0, 65_535);
            }
        },
        ZK_CONNECT("HOST:PORT,...", "a ZooKeeper connect string host:port[,host:port...] without a chroot suffix"
                + " (use --chroot)") {
            @Override
            Object parse(String text) {
                require(text.length() <= 4096);
                for (String server : text.split(",", -1)) {
                    require(validServer(server.strip()));
                }
                return text;
            }
        },
        CHROOT("PATH", "a ZooKeeper path like /warden: starts with '/', no trailing '/', no empty, '.' or '..'"
                + " segments, segments of [A-Za-z0-9._:-], not under /zookeeper") {
            @Override
            Object parse(String text) {
                require(text.length() <= 1024 && CHROOT_PATTERN.matcher(text).matches());
                for (String segment : text.substring(1).split("/")) {
                    require(!segment.equals(".") && !segment.equals(".."));
                }
                require(!text.equals("/zookeeper") && !text.startsWith("/zookeeper/"));
                return text;
            }
        },
        FILE("FILE", "a file system path") {
            @Override
            Object parse(String text) {
                try {
                    return Path.of(text);
                } catch (InvalidPathException e) {
                    throw new IllegalArgumentException(e);
                }
            }
        },
        /** A key or trust store whose type ZooKeeper tells by the file name's extension. */
        STORE_FILE("FILE", "a .pem, .p12, .pfx or .jks file") {
            @Override
            Object parse(String text) {
                String lower = text.toLowerCase(Locale.ROOT);
                require(lower.endsWith(".pem") || lower.endsWith(".p12") || lower.endsWith(".pfx") || lower.endsWith(".jks"));
                return FILE.parse(text);
            }
        },
        SASL_USER("USER", "1-64 characters of [A-Za-z0-9._@-]") {
            @Override
            Object parse(String text) {
                require(text.matches("[A-Za-z0-9._@-]{1,64}"));
                return text;
            }
        },
        ZK_ACL("auto|open|ACL,...", "auto, open, or a comma list of scheme:id:perms (schemes world, auth, digest, ip, "
                + "sasl, x509; perms of crwda)") {
            @Override
            Object parse(String text) {
                ZkAcl.parse(text, null); // auto needs no user to be valid
                return text;
            }
        },
        CERT_NAME("cn|dns|uri|email", "cn, dns, uri or email") {
            @Override
            Object parse(String text) {
                require(java.util.Set.of("cn", "dns", "uri", "email").contains(text));
                return text;
            }
        },
        BOOLEAN("true|false", "true or false") {
            @Override
            Object parse(String text) {
                require(text.equals("true") || text.equals("false"));
                return Boolean.valueOf(text);
            }
        },
        PATH("DIR", "a file system path") {
            @Override
            Object parse(String text) {
                try {
                    return Path.of(text);
                } catch (InvalidPathException e) {
                    throw new IllegalArgumentException(e);
                }
            }
        },
        DURATION_MS("MS", "a whole number of milliseconds 1-" + Setting.MAX_DURATION_MS) {
            @Override
            Object parse(String text) {
                return Duration.ofMillis(wholeNumber(text, 1, Setting.MAX_DURATION_MS));
            }

            @Override
            String render(Object value) {
                return Long.toString(((Duration) value).toMillis());
            }
        },
        POSITIVE_INT("N", "a whole number 1-" + Integer.MAX_VALUE) {
            @Override
            Object parse(String text) {
                return (int) wholeNumber(text, 1, Integer.MAX_VALUE);
            }
        },
        /*
         * Capped so that no ZooKeeper packet comes near its 1 MiB limit: a session's close or expiry is one multi
         * deleting every request (a queue node's path, at most about 600 bytes with a 512-character name, and its
         * record, about 90), so 1,000 requests make at most about 700 KB; a lock's getChildren lists its queue, 62
         * bytes a node, so 10,000 make about 620 KB.
         */
        REQUESTS_PER_SESSION("N", "a whole number 1-1000 (a session's close is one ZooKeeper transaction)") {
            @Override
            Object parse(String text) {
                return (int) wholeNumber(text, 1, 1_000);
            }
        },
        /*
         * At least 8: Jetty's connector takes an acceptor and a selector thread per core pair from the same pool and
         * refuses to start when they leave it no thread for requests.
         */
        HTTP_THREADS("N", "a whole number 8-10000") {
            @Override
            Object parse(String text) {
                return (int) wholeNumber(text, 8, 10_000);
            }
        },
        WAITERS_PER_LOCK("N", "a whole number 1-10000 (a lock's queue is read in one ZooKeeper reply)") {
            @Override
            Object parse(String text) {
                return (int) wholeNumber(text, 1, 10_000);
            }
        },
        /*
         * At most 10,000 (WardenConfig.DEFAULT_MAX_ENTRIES_PER_LOCK says why): a listing of 620 KB, with room under
         * ZooKeeper's default packet limit for nodes Warden does not admit.
         */
        ENTRIES_PER_LOCK("N", "a whole number 1-10000 (a lock's queue is read in one ZooKeeper reply, by every client "
                + "of the lock)") {
            @Override
            Object parse(String text) {
                return (int) wholeNumber(text, 1, 10_000);
            }
        },
        /*
         * Up to 256 MiB (a reply is one buffer of its size). Below ZooKeeper's own default (0xfffff) only to test with
         * small locks (the proof suite): the gateway warns at start, since any reply over it costs the connection.
         */
        PACKET_BYTES("BYTES", "a whole number of bytes 16384-268435456") {
            @Override
            Object parse(String text) {
                return (int) wholeNumber(text, 16_384, 256L << 20);
            }
        },
        BYTES_OR_AUTO("BYTES", "0 (automatic) or a whole number of bytes 1048576-1099511627776") {
            @Override
            Object parse(String text) {
                long value = wholeNumber(text, 0, 1L << 40);
                require(value == 0 || value >= 1L << 20);
                return value;
            }
        },
        NAMESPACE("NAME", "a namespace matching [a-z][a-z0-9-]{0,62}") {
            @Override
            Object parse(String text) {
                require(NAMESPACE_PATTERN.matcher(text).matches());
                return text;
            }
        },
        GATEWAY_ID("ID", "1-64 characters of [A-Za-z0-9._-] starting with a letter or digit") {
            @Override
            Object parse(String text) {
                require(GATEWAY_ID_PATTERN.matcher(text).matches());
                return text;
            }
        },
        HOST_LIST("HOST,...", "a comma list of host names or addresses, *.domain, or *") {
            @Override
            Object parse(String text) {
                java.util.List<String> out = new java.util.ArrayList<>();
                for (String item : text.split(",", -1)) {
                    String h = item.strip();
                    require(h.equals("*") || (h.length() <= 253 && HOST_PATTERN.matcher(h.startsWith("*.") ? h.substring(2) : h).matches()));
                    out.add(h);
                }
                return java.util.List.copyOf(out);
            }

            @Override
            String render(Object value) {
                return String.join(",", castList(value));
            }
        },
        ORIGIN_LIST("ORIGIN,...", "a comma list of origins like https://console.example.com:8443, or *") {
            @Override
            Object parse(String text) {
                java.util.List<String> out = new java.util.ArrayList<>();
                for (String item : text.split(",", -1)) {
                    String o = item.strip();
                    require(o.equals("*") || ORIGIN_PATTERN.matcher(o).matches());
                    out.add(o);
                }
                return java.util.List.copyOf(out);
            }

            @Override
            String render(Object value) {
                return String.join(",", castList(value));
            }
        },
        /**
         * The cells besides the default one, {@code NAME=HOST:PORT[,HOST:PORT...][/CHROOT]} separated by ';': each
         * connect string as zk's, each chroot as chroot's (none: the cell's chroot is null, meaning --chroot's).
         * Empty text is no cells.
         */
        CELLS("NAME=HOST:PORT,.../CHROOT;...", "NAME=HOST:PORT[,HOST:PORT...][/CHROOT] separated by ';', at most "
                + Setting.MAX_CELLS + " cells: NAME matching [a-z][a-z0-9-]{0,31}, not default, each once; the "
                + "connect string as for zk, the chroot (optional, else --chroot's) as for chroot") {
            @Override
            Object parse(String text) {
                if (text.isEmpty()) {
                    return java.util.List.of();
                }
                String[] items = text.split(";", -1);
                if (items.length > Setting.MAX_CELLS) {
                    throw new BadValue(items.length + " cells, more than " + Setting.MAX_CELLS);
                }
                java.util.List<CellAddress> out = new java.util.ArrayList<>();
                java.util.Set<String> names = new java.util.HashSet<>();
                for (String item : items) {
                    String cell = item.strip();
                    int eq = cell.indexOf('=');
                    if (eq < 0) {
                        throw new BadValue(cell.isEmpty() ? "an empty cell (a ';' too many)"
                                : ConfigLoader.show(cell) + " does not start with NAME=");
                    }
                    String name = cell.substring(0, eq).strip();
                    String address = cell.substring(eq + 1).strip();
                    if (!CELL_NAME_PATTERN.matcher(name).matches()) {
                        throw new BadValue("cell name " + ConfigLoader.show(name)
                                + " does not match [a-z][a-z0-9-]{0,31}");
                    }
                    if (name.equals(Setting.DEFAULT_CELL)) {
                        throw new BadValue("cell name default is taken by the default cell (the ensemble of zk)");
                    }
                    if (!names.add(name)) {
                        throw new BadValue("cell " + name + " is given twice");
                    }
                    // A connect string has no '/' (zk's check refuses one), so the first '/' starts the chroot.
                    int slash = address.indexOf('/');
                    String connect = slash < 0 ? address : address.substring(0, slash).strip();
                    String chroot = slash < 0 ? null : address.substring(slash);
                    try {
                        ZK_CONNECT.parse(connect);
                    } catch (IllegalArgumentException e) {
                        throw new BadValue("cell " + name + " has connect string " + ConfigLoader.show(connect)
                                + ", not host:port[,host:port...]");
                    }
                    if (chroot != null) {
                        try {
                            CHROOT.parse(chroot);
                        } catch (IllegalArgumentException e) {
                            throw new BadValue("cell " + name + " has chroot " + ConfigLoader.show(chroot) + ", not "
                                    + CHROOT.allowed());
                        }
                    }
                    // kept without the spaces allowed around its servers, so that it renders as it is written
                    String servers = String.join(",", java.util.Arrays.stream(connect.split(",")).map(String::strip)
                            .toList());
                    out.add(new CellAddress(name, servers, chroot));
                }
                return java.util.List.copyOf(out);
            }

            @Override
            String render(Object value) {
                java.util.StringJoiner out = new java.util.StringJoiner(";");
                for (CellAddress cell : castCells(value)) {
                    out.add(cell.name() + "=" + cell.zkConnect() + (cell.chroot() == null ? "" : cell.chroot()));
                }
                return out.toString();
            }

            @Override
            boolean allowsEmpty() {
                return true;
            }
        },
        /**
         * Which cell serves each namespace, {@code NAMESPACE=CELL,...}, as an unmodifiable map sorted by namespace.
         * Whether each cell is one of cells is checked with the other settings ({@link ConfigLoader}). Empty text is
         * no routes.
         */
        ROUTES("NAMESPACE=CELL,...", "a comma list of NAMESPACE=CELL: NAMESPACE matching [a-z][a-z0-9-]{0,62}, each "
                + "once; CELL default or a name of cells") {
            @Override
            Object parse(String text) {
                if (text.isEmpty()) {
                    return java.util.Map.of();
                }
                java.util.SortedMap<String, String> out = new java.util.TreeMap<>();
                for (String item : text.split(",", -1)) {
                    String route = item.strip();
                    int eq = route.indexOf('=');
                    if (eq < 0) {
                        throw new BadValue(route.isEmpty() ? "an empty route (a ',' too many)"
                                : "route " + ConfigLoader.show(route) + " is not NAMESPACE=CELL");
                    }
                    String namespace = route.substring(0, eq).strip();
                    String cell = route.substring(eq + 1).strip();
                    if (!NAMESPACE_PATTERN.matcher(namespace).matches()) {
                        throw new BadValue("namespace " + ConfigLoader.show(namespace)
                                + " does not match [a-z][a-z0-9-]{0,62}");
                    }
                    if (!cell.equals(Setting.DEFAULT_CELL) && !CELL_NAME_PATTERN.matcher(cell).matches()) {
                        throw new BadValue("namespace " + namespace + " goes to " + ConfigLoader.show(cell)
                                + ", not default or a cell name matching [a-z][a-z0-9-]{0,31}");
                    }
                    if (out.putIfAbsent(namespace, cell) != null) {
                        throw new BadValue("namespace " + namespace + " is routed twice");
                    }
                }
                return java.util.Collections.unmodifiableMap(out);
            }

            @Override
            String render(Object value) {
                java.util.StringJoiner out = new java.util.StringJoiner(",");
                castRoutes(value).forEach((namespace, cell) -> out.add(namespace + "=" + cell));
                return out.toString();
            }

            @Override
            boolean allowsEmpty() {
                return true;
            }
        },
        /** A credential: never shown, neither in messages nor in the settings' listing. */
        SECRET("TOKEN", "16-256 printable ASCII characters without spaces") {
            @Override
            Object parse(String text) {
                require(SECRET_PATTERN.matcher(text).matches());
                return text;
            }

            @Override
            String render(Object value) {
                return value == null ? "(unset)" : "(set, hidden)";
            }
        };

        private static final Pattern HOST_PATTERN = Pattern.compile("[A-Za-z0-9._:%\\[\\]-]+");
        private static final Pattern ORIGIN_PATTERN =
                Pattern.compile("https?://([A-Za-z0-9.-]+|\\[[0-9A-Fa-f:.]+])(:[0-9]{1,5})?");
        private static final Pattern CHROOT_PATTERN = Pattern.compile("(/[A-Za-z0-9._:-]+)+");
        private static final Pattern NAMESPACE_PATTERN = Pattern.compile("[a-z][a-z0-9-]{0,62}");
        private static final Pattern CELL_NAME_PATTERN = CellAddress.NAME;
        private static final Pattern SECRET_PATTERN = Pattern.compile("[!-~]{16,256}");
        private static final Pattern GATEWAY_ID_PATTERN = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,63}");
        private static final Pattern NUMBER_PATTERN = Pattern.compile("-?[0-9]{1,18}");
        private static final Pattern HOST_NAME = Pattern.compile("[A-Za-z0-9._-]+");
        private static final Pattern IPV6 = Pattern.compile("\\[[0-9A-Fa-f:.%]+]");

        private final String metavar;
        private final String allowed;

        Kind(String metavar, String allowed) {
            this.metavar = metavar;
            this.allowed = allowed;
        }

        abstract Object parse(String text);

        String render(Object value) {
            return String.valueOf(value);
        }

        /** Whether empty text is a value (no cells, no routes); for other kinds it is refused. */
        boolean allowsEmpty() {
            return false;
        }

        /** What a value looks like, for the usage text ({@code --http-port PORT}). */
        String metavar() {
            return metavar;
        }

        /** What is allowed, completing "expected ...". */
        String allowed() {
            return allowed;
        }

        private static void require(boolean ok) {
            if (!ok) {
                throw new IllegalArgumentException();
            }
        }

        private static long wholeNumber(String text, long min, long max) {
            require(NUMBER_PATTERN.matcher(text).matches());
            long value = Long.parseLong(text);
            require(value >= min && value <= max);
            return value;
        }

        /** {@code host}, {@code host:port} or {@code [ipv6]:port}; a port, when given, is 1-65535. */
        private static boolean validServer(String server) {
            String host = server;
            String port = null;
            if (server.startsWith("[")) {
                int close = server.indexOf(']');
                if (close < 0) {
                    return false;
                }
                host = server.substring(0, close + 1);
                String rest = server.substring(close + 1);
                if (!rest.isEmpty()) {
                    if (!rest.startsWith(":")) {
                        return false;
                    }
                    port = rest.substring(1);
                }
                if (!IPV6.matcher(host).matches()) {
                    return false;
                }
            } else {
                int colon = server.lastIndexOf(':');
                if (colon >= 0) {
                    host = server.substring(0, colon);
                    port = server.substring(colon + 1);
                }
                if (!HOST_NAME.matcher(host).matches()) {
                    return false;
                }
            }
            if (port == null) {
                return true;
            }
            if (!port.matches("[0-9]{1,5}")) {
                return false;
            }
            int p = Integer.parseInt(port);
            return p >= 1 && p <= 65_535;
        }
    }
}
