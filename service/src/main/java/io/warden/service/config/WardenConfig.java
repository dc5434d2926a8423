package io.warden.service.config;

import java.nio.file.Path;
import java.time.Duration;

/**
 * Every setting of a gateway, with the defaults of contract §5. Each field has a flag
 * ({@code --http-port}), an environment variable ({@code WARDEN_HTTP_PORT}) and a YAML key
 * ({@code http-port}); see {@code ConfigLoader} and docs/configuration.md.
 *
 * @param zkConnect   ZooKeeper connect string, or null to start the embedded server
 * @param chroot      the cell's chroot, e.g. {@code /warden}
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
        int maxSessionsPerGateway,
        String leaseNamespace,
        Duration drainTimeout,
        int maxBodyBytes,
        String gatewayId) {

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
                100_000,
                "default",
                Duration.ofSeconds(10),
                64 * 1024,
                null);
    }

    public WardenConfig withZkConnect(String value) {
        return new WardenConfig(httpHost, httpPort, value, chroot, dataDir, embeddedZkPort, zkSessionTimeout,
                zkConnectionTimeout, sessionTtlMin, sessionTtlMax, sessionTtlDefault, maxRequestsPerSession,
                maxWaitersPerLock, maxSessionsPerGateway, leaseNamespace, drainTimeout, maxBodyBytes, gatewayId);
    }

    public WardenConfig withHttpPort(int value) {
        return new WardenConfig(httpHost, value, zkConnect, chroot, dataDir, embeddedZkPort, zkSessionTimeout,
                zkConnectionTimeout, sessionTtlMin, sessionTtlMax, sessionTtlDefault, maxRequestsPerSession,
                maxWaitersPerLock, maxSessionsPerGateway, leaseNamespace, drainTimeout, maxBodyBytes, gatewayId);
    }

    public WardenConfig withLimits(int requestsPerSession, int waitersPerLock, int sessionsPerGateway) {
        return new WardenConfig(httpHost, httpPort, zkConnect, chroot, dataDir, embeddedZkPort, zkSessionTimeout,
                zkConnectionTimeout, sessionTtlMin, sessionTtlMax, sessionTtlDefault, requestsPerSession,
                waitersPerLock, sessionsPerGateway, leaseNamespace, drainTimeout, maxBodyBytes, gatewayId);
    }

    public WardenConfig withSessionTtls(Duration min, Duration max, Duration defaultTtl) {
        return new WardenConfig(httpHost, httpPort, zkConnect, chroot, dataDir, embeddedZkPort, zkSessionTimeout,
                zkConnectionTimeout, min, max, defaultTtl, maxRequestsPerSession,
                maxWaitersPerLock, maxSessionsPerGateway, leaseNamespace, drainTimeout, maxBodyBytes, gatewayId);
    }

    public WardenConfig withZkSessionTimeout(Duration value) {
        return new WardenConfig(httpHost, httpPort, zkConnect, chroot, dataDir, embeddedZkPort, value,
                zkConnectionTimeout, sessionTtlMin, sessionTtlMax, sessionTtlDefault, maxRequestsPerSession,
                maxWaitersPerLock, maxSessionsPerGateway, leaseNamespace, drainTimeout, maxBodyBytes, gatewayId);
    }
}
