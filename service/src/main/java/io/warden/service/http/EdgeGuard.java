package io.warden.service.http;

import io.javalin.http.Context;
import java.net.InetAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.net.URI;
import java.net.URISyntaxException;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * What a request must show before any handler sees it: that a browser cannot be made to send it from another site, nor
 * be pointed at this gateway under a foreign name.
 *
 * <ul>
 *   <li>{@code Host} must name this gateway: one of {@code allowed-hosts}, by default the loopback names, this
 *       machine's names and addresses, {@code http-host} and {@code advertise-host} (DNS rebinding gives a foreign
 *       name to one of our addresses; such a request carries that name). Otherwise 421 MISDIRECTED_REQUEST.</li>
 *   <li>An {@code Origin} must be the request's own origin (the same host and port as its {@code Host}) or one of
 *       {@code allowed-origins}. Otherwise 403 PERMISSION_DENIED: another site's page is calling.</li>
 *   <li>On the API ({@code /v1}, {@code /lock}), a request with a body must say {@code Content-Type:
 *       application/json} (optionally {@code ; charset=utf-8}), and none may carry a {@code Content-Encoding} other
 *       than {@code identity}: 415 UNSUPPORTED_MEDIA_TYPE. Browsers send {@code text/plain} and form bodies to any
 *       site without asking (no CORS preflight); {@code application/json} from another origin needs a preflight,
 *       which this gateway never grants. A request without a body (keepalive with no body) may omit it.</li>
 * </ul>
 * Each refusal is a problem document whose {@code field} names the header.
 *
 * <p>Thread-safety: immutable.
 */
final class EdgeGuard {
    static final String ANY = "*";

    private final Set<String> hosts;
    private final Set<String> hostSuffixes;
    private final boolean anyHost;
    private final Set<String> origins;
    private final boolean anyOrigin;

    /**
     * @param allowedHosts   the allow-list of host names and addresses ({@code *} = any, {@code *.example.com} = any name
     *                       under example.com), or null for the default
     * @param allowedOrigins origins besides the request's own ({@code *} = any), or null for none
     * @param httpHost       the address the gateway binds to (part of the default)
     * @param advertiseHost  the name other gateways reach this one at, or null (part of the default)
     */
    EdgeGuard(List<String> allowedHosts, List<String> allowedOrigins, String httpHost, String advertiseHost) {
        Set<String> exact = new LinkedHashSet<>();
        Set<String> suffixes = new LinkedHashSet<>();
        boolean any = false;
        for (String h : allowedHosts == null ? defaultHosts(httpHost, advertiseHost) : allowedHosts) {
            String n = normalizeHost(h);
            if (n.equals(ANY)) {
                any = true;
            } else if (n.startsWith("*.")) {
                suffixes.add(n.substring(1));
            } else {
                exact.add(n);
            }
        }
        this.hosts = Set.copyOf(exact);
        this.hostSuffixes = Set.copyOf(suffixes);
        this.anyHost = any;
        Set<String> o = new LinkedHashSet<>();
        boolean anyO = false;
        for (String origin : allowedOrigins == null ? List.<String>of() : allowedOrigins) {
            if (origin.strip().equals(ANY)) {
                anyO = true;
            } else {
                o.add(normalizeOrigin(origin.strip()));
            }
        }
        this.origins = Set.copyOf(o);
        this.anyOrigin = anyO;
    }

    /** The loopback names, this machine's name and every address of its interfaces, and the configured hosts. */
    static Set<String> defaultHosts(String httpHost, String advertiseHost) {
        Set<String> names = new LinkedHashSet<>(List.of("localhost", "localhost.localdomain", "127.0.0.1", "::1"));
        if (httpHost != null && !httpHost.equals("0.0.0.0") && !httpHost.equals("::") && !httpHost.equals("[::]")) {
            names.add(httpHost);
        }
        if (advertiseHost != null) {
            names.add(advertiseHost);
        }
        try {
            InetAddress local = InetAddress.getLocalHost();
            names.add(local.getHostName());
            names.add(local.getCanonicalHostName());
            names.add(local.getHostAddress());
        } catch (java.io.IOException | SecurityException e) {
            // no resolvable name for this machine: its addresses below still count
        }
        try {
            for (NetworkInterface nic : Collections.list(NetworkInterface.getNetworkInterfaces())) {
                for (InetAddress a : Collections.list(nic.getInetAddresses())) {
                    String text = a.getHostAddress();
                    int zone = text.indexOf('%');
                    names.add(zone < 0 ? text : text.substring(0, zone));
                }
            }
        } catch (SocketException | NullPointerException e) {
            // no interfaces to list (a sandbox): the names above remain
        }
        return names;
    }

    /** Host and Origin: for every route, the API's and the console's, and WebSocket upgrades. */
    void checkBrowser(Context ctx) {
        String host = ctx.req().getHeader("Host");
        if (host != null && !anyHost && !hostAllowed(hostPart(host))) {
            throw new ProblemException(421, "MISDIRECTED_REQUEST", "Host: '" + Fields.abbreviate(host)
                    + "' is not a name of this gateway (see the setting allowed-hosts)", Map.of("field", "Host"));
        }
        String origin = ctx.req().getHeader("Origin");
        if (origin != null && !anyOrigin && !sameOrigin(origin, host) && !origins.contains(normalizeOrigin(origin))) {
            throw new ProblemException(403, "PERMISSION_DENIED", "Origin: '" + Fields.abbreviate(origin)
                    + "' may not call this gateway (not its own origin; see the setting allowed-origins)",
                    Map.of("field", "Origin"));
        }
    }

    /** Content-Encoding and Content-Type, for the API's routes. */
    void checkMediaType(Context ctx) {
        String encoding = ctx.req().getHeader("Content-Encoding");
        if (encoding != null && !encoding.strip().equalsIgnoreCase("identity")) {
            throw new ProblemException(415, "UNSUPPORTED_MEDIA_TYPE", "Content-Encoding: '" + Fields.abbreviate(encoding)
                    + "' is not supported; send the body unencoded", Map.of("field", "Content-Encoding"));
        }
        boolean hasBody = ctx.req().getContentLengthLong() > 0 || ctx.req().getHeader("Transfer-Encoding") != null;
        if (!hasBody) {
            return;
        }
        String type = ctx.req().getHeader("Content-Type");
        if (type == null || !isJson(type)) {
            throw new ProblemException(415, "UNSUPPORTED_MEDIA_TYPE", "Content-Type: "
                    + (type == null ? "is missing" : "'" + Fields.abbreviate(type) + "' is not supported")
                    + "; send application/json", Map.of("field", "Content-Type"));
        }
    }

    /** {@code application/json}, with at most the parameter {@code charset=utf-8}. */
    static boolean isJson(String contentType) {
        String[] parts = contentType.split(";", -1);
        if (!parts[0].strip().equalsIgnoreCase("application/json")) {
            return false;
        }
        for (int i = 1; i < parts.length; i++) {
            String p = parts[i].strip();
            if (p.isEmpty() && i == parts.length - 1) {
                continue;
            }
            int eq = p.indexOf('=');
            if (eq < 0 || !p.substring(0, eq).strip().equalsIgnoreCase("charset")) {
                return false;
            }
            String value = p.substring(eq + 1).strip();
            if (value.length() >= 2 && value.startsWith("\"") && value.endsWith("\"")) {
                value = value.substring(1, value.length() - 1);
            }
            if (!value.equalsIgnoreCase("utf-8")) {
                return false;
            }
        }
        return true;
    }

    private boolean hostAllowed(String host) {
        if (hosts.contains(host)) {
            return true;
        }
        for (String suffix : hostSuffixes) {
            if (host.endsWith(suffix) && host.length() > suffix.length()) {
                return true;
            }
        }
        return false;
    }

    /** Whether {@code origin} is scheme://host[:port] with the host and port of the request's Host header. */
    private static boolean sameOrigin(String origin, String hostHeader) {
        if (hostHeader == null) {
            return false;
        }
        URI uri;
        try {
            uri = new URI(origin.strip());
        } catch (URISyntaxException e) {
            return false;
        }
        String scheme = uri.getScheme() == null ? "" : uri.getScheme().toLowerCase(Locale.ROOT);
        if (uri.getHost() == null || !(scheme.equals("http") || scheme.equals("https"))) {
            return false;
        }
        int defaultPort = scheme.equals("https") ? 443 : 80;
        int originPort = uri.getPort() < 0 ? defaultPort : uri.getPort();
        String requestHost = hostPart(hostHeader);
        int requestPort = portPart(hostHeader, defaultPort);
        return normalizeHost(uri.getHost()).equals(requestHost) && originPort == requestPort;
    }

    /** The host of a Host header without its port and brackets, lower case, without a trailing dot. */
    static String hostPart(String hostHeader) {
        String h = hostHeader.strip();
        if (h.startsWith("[")) {
            int close = h.indexOf(']');
            return normalizeHost(close < 0 ? h : h.substring(0, close + 1));
        }
        int colon = h.indexOf(':');
        if (colon >= 0 && colon == h.lastIndexOf(':')) {
            h = h.substring(0, colon);
        }
        return normalizeHost(h);
    }

    private static int portPart(String hostHeader, int defaultPort) {
        String h = hostHeader.strip();
        int from = h.startsWith("[") ? h.indexOf(']') + 1 : 0;
        int colon = h.indexOf(':', Math.max(from, 0));
        if (colon < 0 || (from == 0 && colon != h.lastIndexOf(':'))) {
            return defaultPort;
        }
        try {
            return Integer.parseInt(h.substring(colon + 1));
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    static String normalizeHost(String host) {
        String h = host.strip().toLowerCase(Locale.ROOT);
        if (h.startsWith("[") && h.endsWith("]")) {
            h = h.substring(1, h.length() - 1);
        }
        while (h.endsWith(".") && h.length() > 1) {
            h = h.substring(0, h.length() - 1);
        }
        if (h.indexOf(':') >= 0 && h.matches("[0-9a-f:.]+")) {
            try {
                // one spelling per IPv6 address (::1 and 0:0:0:0:0:0:0:1); a literal is parsed, never looked up
                h = InetAddress.getByName(h).getHostAddress();
            } catch (java.io.IOException e) {
                // not an address after all: compared as written
            }
        }
        return h;
    }

    /** scheme://host[:port] in lower case, without a default port or a trailing slash. */
    static String normalizeOrigin(String origin) {
        String o = origin.strip().toLowerCase(Locale.ROOT);
        while (o.endsWith("/")) {
            o = o.substring(0, o.length() - 1);
        }
        if (o.startsWith("http://") && o.endsWith(":80")) {
            o = o.substring(0, o.length() - 3);
        } else if (o.startsWith("https://") && o.endsWith(":443")) {
            o = o.substring(0, o.length() - 4);
        }
        return o;
    }
}
