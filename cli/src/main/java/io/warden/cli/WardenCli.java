package io.warden.cli;

import com.fasterxml.jackson.databind.JsonNode;
import io.warden.client.WardenClient;
import io.warden.client.WardenClientException;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.ScopeType;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.net.InetAddress;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * {@code warden}: the command-line client of a Warden cell. Global options are inherited by every subcommand, so
 * they may be given before or after its name.
 *
 * <p>Thread-safety: one instance per command line; not thread-safe.
 */
@Command(name = "warden", mixinStandardHelpOptions = true, versionProvider = BuildVersion.class,
        description = "Fenced distributed locks on ZooKeeper, from the command line.",
        subcommands = {LockCommand.class, AcquireCommand.class, ReleaseCommand.class, RenewCommand.class,
                GetCommand.class, LsCommand.class, WatchCommand.class, SessionsCommand.class, CellsCommand.class,
                CommandLine.HelpCommand.class},
        exitCodeListHeading = "%nExit codes:%n", exitCodeList = {
        "  0:   success (for lock: the command's own exit code once it ran)",
        "  1:   unexpected error",
        "  2:   usage error: bad option or argument, or one the gateway rejected",
        "  3:   not acquired: the lock is held, or the wait ran out",
        "  4:   lock lost while the command ran (session lost or no longer confirmed); the command was killed",
        "  5:   no gateway reachable, or the cell is unavailable (no ZooKeeper quorum)",
        "  6:   not found: unknown session or lease, or the lease does not hold that lock",
        "  7:   not allowed: no or unknown credentials (401), or the principal may not do this (403)",
        "127:   lock: the command could not be started"},
        footerHeading = "%nEnvironment:%n",
        footer = {"  WARDEN_ENDPOINTS   default for --endpoints",
                "  WARDEN_TOKEN_FILE  default for --token-file",
                "%nDurations (--ttl, --timeout, --wait, --kill-grace): a number and a unit, largest unit first:",
                "  250ms, 1.5s, 1m30s, 2h. A bare 0 means none; any other bare number is refused."})
public final class WardenCli {
    @Spec
    CommandLine.Model.CommandSpec spec;

    @Option(names = "--endpoints", scope = ScopeType.INHERIT, split = ",", paramLabel = "URL",
            defaultValue = "${env:WARDEN_ENDPOINTS:-http://localhost:7070}",
            description = "Gateways of the cell, tried in this order (env WARDEN_ENDPOINTS; default: ${DEFAULT-VALUE}).")
    List<String> endpoints = new ArrayList<>();

    @Option(names = "--client-id", scope = ScopeType.INHERIT, paramLabel = "ID",
            description = "Client id shown in listings (default: warden-cli@HOST).")
    String clientId;

    @Option(names = "--ttl", scope = ScopeType.INHERIT, paramLabel = "DURATION", defaultValue = "10s",
            converter = Durations.Converter.class,
            description = "Session / lease TTL, e.g. 10s, 500ms, 2m; the cell clamps it to its range (default: ${DEFAULT-VALUE}).")
    Duration ttl;

    @Option(names = "--timeout", scope = ScopeType.INHERIT, paramLabel = "DURATION", defaultValue = "5s",
            converter = Durations.Converter.class,
            description = "How long one call to the gateways may take (default: ${DEFAULT-VALUE}).")
    Duration timeout;

    @Option(names = "--json", scope = ScopeType.INHERIT, description = "Machine output: JSON.")
    boolean json;

    @Option(names = "--token", scope = ScopeType.INHERIT, paramLabel = "TOKEN",
            description = "Bearer token of your principal, for a cell with an auth file (prefer --token-file: "
                    + "a command line is visible to other users of the machine).")
    String token;

    @Option(names = "--token-file", scope = ScopeType.INHERIT, paramLabel = "FILE",
            defaultValue = "${env:WARDEN_TOKEN_FILE}",
            description = "File whose first line is the bearer token (env WARDEN_TOKEN_FILE).")
    java.nio.file.Path tokenFile;

    @Option(names = "--cacert", scope = ScopeType.INHERIT, paramLabel = "FILE",
            description = "PEM CA certificates to trust https gateways by (default: the JVM's trust store).")
    java.nio.file.Path cacert;

    @Option(names = "--cert", scope = ScopeType.INHERIT, paramLabel = "FILE",
            description = "PEM client certificate (mTLS): its name is your principal; needs --key.")
    java.nio.file.Path cert;

    @Option(names = "--key", scope = ScopeType.INHERIT, paramLabel = "FILE",
            description = "PEM (PKCS#8, unencrypted) private key of --cert.")
    java.nio.file.Path key;

    /** The TLS context from --cacert/--cert/--key, or null when none is given (the JVM's defaults). */
    javax.net.ssl.SSLContext tls() {
        if (cacert == null && cert == null && key == null) {
            return null;
        }
        try {
            return io.warden.client.PemTls.sslContext(cacert, cert, key);
        } catch (IllegalArgumentException e) {
            throw usage("--cacert/--cert/--key: " + e.getMessage());
        }
    }

    /** The bearer token from --token or --token-file, or null for a cell in open mode. */
    String token() {
        if (token != null && tokenFile != null && spec.commandLine().getParseResult().hasMatchedOption("--token-file")) {
            throw usage("give --token or --token-file, not both");
        }
        String t = token;
        if (t == null && tokenFile != null) {
            try {
                t = java.nio.file.Files.readAllLines(tokenFile).stream().findFirst().orElse("").strip();
            } catch (java.io.IOException | RuntimeException e) {
                throw usage("--token-file " + tokenFile + ": cannot be read: " + e.getMessage());
            }
            if (t.isEmpty()) {
                throw usage("--token-file " + tokenFile + ": the first line is empty");
            }
        }
        if (t != null && (t.length() > 4096 || t.chars().anyMatch(c -> c < 0x21 || c > 0x7e))) {
            throw usage("the token must be 1-4096 printable ASCII characters without spaces");
        }
        return t;
    }

    public static void main(String[] args) {
        System.exit(commandLine().execute(args));
    }

    /** The command line with warden's exit codes and error reporting (what {@link #main} runs; tests use it). */
    public static CommandLine commandLine() {
        CommandLine cmd = new CommandLine(new WardenCli());
        cmd.setExecutionExceptionHandler((e, commandLine, parseResult) -> {
            PrintWriter err = commandLine.getErr();
            if (e instanceof CliException c) {
                err.println("warden: " + c.getMessage());
                err.flush();
                return c.exitCode();
            }
            if (e instanceof CommandLine.ParameterException p) {
                throw p;
            }
            err.println("warden: " + Gateways.describe(e));
            err.flush();
            return ExitCodes.ERROR;
        });
        return cmd;
    }

    List<URI> endpointUris() {
        List<URI> uris = new ArrayList<>();
        for (String e : endpoints) {
            if (e.isBlank()) {
                continue;
            }
            URI uri;
            try {
                uri = URI.create(e.trim());
            } catch (IllegalArgumentException x) {
                throw usage("--endpoints: '" + e + "' is not a URL");
            }
            if (!("http".equals(uri.getScheme()) || "https".equals(uri.getScheme())) || uri.getHost() == null) {
                throw usage("--endpoints: '" + e + "' must be an http(s) URL with a host, e.g. http://gw1:7070");
            }
            uris.add(uri);
        }
        if (uris.isEmpty()) {
            throw usage("--endpoints names no gateway");
        }
        return uris;
    }

    CliException usage(String message) {
        return new CliException(ExitCodes.USAGE, message);
    }

    String clientId() {
        if (clientId != null) {
            if (clientId.isEmpty() || clientId.length() > 128) {
                throw usage("--client-id must be 1-128 characters");
            }
            return clientId;
        }
        String host;
        try {
            host = InetAddress.getLocalHost().getHostName();
        } catch (Exception e) {
            host = "localhost";
        }
        String id = "warden-cli@" + host;
        return id.length() > 128 ? id.substring(0, 128) : id;
    }

    Gateways gateways() {
        return new Gateways(endpointUris(), timeout, token(), tls());
    }

    /** Opens a session with the SDK (kept alive in the background). */
    WardenClient client() {
        List<URI> uris = endpointUris();
        try {
            WardenClient.Builder b = WardenClient.builder().endpoints(uris.stream().map(URI::toString).toArray(String[]::new))
                    .clientId(clientId()).sessionTtl(ttl).requestTimeout(timeout);
            String t = token();
            if (t != null) {
                b.bearerToken(t);
            }
            javax.net.ssl.SSLContext ssl = tls();
            if (ssl != null) {
                b.sslContext(ssl);
            }
            return b.build();
        } catch (IllegalArgumentException | IllegalStateException e) {
            throw usage(e.getMessage());
        } catch (WardenClientException e) {
            throw fromClient("could not open a session", e);
        }
    }

    /** An SDK failure as an exit code: no answer is UNREACHABLE, a refused argument USAGE. */
    static CliException fromClient(String what, WardenClientException e) {
        int code;
        if (e.code().isEmpty() || e.status() == 503) {
            code = e.status() == 0 || e.status() == 503 ? ExitCodes.UNREACHABLE : ExitCodes.ERROR;
        } else {
            code = switch (e.status()) {
                case 400, 413 -> ExitCodes.USAGE;
                case 401, 403 -> ExitCodes.DENIED;
                case 404 -> ExitCodes.NOT_FOUND;
                default -> ExitCodes.ERROR;
            };
        }
        return new CliException(code, what + ": " + e.getMessage(), e);
    }

    PrintWriter out() {
        return spec.commandLine().getOut();
    }

    PrintWriter err() {
        return spec.commandLine().getErr();
    }

    /** Prints {@code node} as one line of JSON. */
    void printJson(JsonNode node) {
        out().println(node.toString());
        out().flush();
    }
}
