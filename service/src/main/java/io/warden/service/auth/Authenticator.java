package io.warden.service.auth;

import io.warden.service.api.WardenException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.Objects;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Names the principal of each request from its credentials (docs/api.md, authorization): a bearer token, whose SHA-256
 * the auth file holds, or the principal name of a verified client certificate. Without an auth file every request is
 * {@link Caller#OPEN}.
 *
 * <p>Reloading: the file is read again when it changes (looked at every {@link #POLL_MS} ms: modification time, size
 * and file key) and on {@link #reload()} (SIGHUP). A file that cannot be used is refused with one WARN line naming the
 * entry, and the last good one stays in force; the first read, at start, must succeed.
 *
 * <p>Concurrency: {@code current} is a volatile reference to an immutable {@link AuthFile}, read by every request
 * and replaced by the one reload thread ({@code warden-auth-reload}) or a SIGHUP handler; {@link #reload} is
 * synchronized so two reloads never interleave.
 */
public final class Authenticator implements AutoCloseable {
    static final long POLL_MS = 1000;
    private static final Logger log = LoggerFactory.getLogger(Authenticator.class);

    private final Path file;
    private volatile AuthFile current;
    /** Guarded by this: what the file looked like when last read. */
    private Object lastSeen;
    private final AtomicLong reloads = new AtomicLong();
    private final AtomicLong refusedReloads = new AtomicLong();
    private final ScheduledExecutorService poller;

    private Authenticator(Path file, AuthFile first) {
        this.file = file;
        this.current = first;
        if (file == null) {
            poller = null;
            return;
        }
        lastSeen = look(file);
        poller = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "warden-auth-reload");
            t.setDaemon(true);
            return t;
        });
        poller.scheduleWithFixedDelay(this::reloadIfChanged, POLL_MS, POLL_MS, TimeUnit.MILLISECONDS);
    }

    /** Open mode: no auth file, every request is {@link Caller#OPEN}. */
    public static Authenticator open() {
        return new Authenticator(null, null);
    }

    /** From {@code file}, which must be good now ({@link AuthFileException} otherwise); reloaded when it changes. */
    public static Authenticator fromFile(Path file) {
        Objects.requireNonNull(file, "file");
        AuthFile first = AuthFile.read(file);
        log.info("auth file {}: {} principals", file, first.size());
        return new Authenticator(file, first);
    }

    /** Whether an auth file is in force (otherwise every call is open). */
    public boolean enabled() {
        return file != null;
    }

    /**
     * The caller named by {@code authorization} (the {@code Authorization} header, or null) or by
     * {@code certificatePrincipal} (a verified client certificate's principal name, or null). UNAUTHENTICATED when an
     * auth file is in force and neither names one of its principals.
     */
    public Caller authenticate(String authorization, String certificatePrincipal) {
        AuthFile f = current;
        if (f == null) {
            return Caller.OPEN;
        }
        if (authorization != null) {
            String token = bearer(authorization);
            Caller c = f.byToken(token);
            if (c == null) {
                throw WardenException.unauthenticated("the bearer token is not one of this cell's principals'");
            }
            return c;
        }
        if (certificatePrincipal != null) {
            Caller c = f.byName(certificatePrincipal);
            if (c == null) {
                throw WardenException.unauthenticated("the client certificate names '" + printable(certificatePrincipal)
                        + "', which is not a principal of this cell's auth file");
            }
            return c;
        }
        throw WardenException.unauthenticated("this gateway needs credentials: an 'Authorization: Bearer TOKEN' header "
                + "or a client certificate");
    }

    /** The principal whose bearer token this is (the console's login), or empty; empty in open mode. */
    public java.util.Optional<Caller> byToken(String token) {
        AuthFile f = current;
        return f == null || token == null ? java.util.Optional.empty() : java.util.Optional.ofNullable(f.byToken(token));
    }

    private static String bearer(String header) {
        String h = header.strip();
        int space = h.indexOf(' ');
        if (space < 0 || !h.substring(0, space).equalsIgnoreCase("Bearer")) {
            throw WardenException.unauthenticated("the Authorization header must be 'Bearer TOKEN'");
        }
        String token = h.substring(space + 1).strip();
        if (token.isEmpty() || token.length() > 4096) {
            throw WardenException.unauthenticated("the Authorization header must be 'Bearer TOKEN' with a token of 1 to 4096 characters");
        }
        return token;
    }

    private static String printable(String s) {
        String cut = s.length() > 64 ? s.substring(0, 64) + "…" : s;
        return cut.replaceAll("[^\\x20-\\x7e]", "?");
    }

    /** Reads the file again now (SIGHUP); keeps the last good one if this one is refused. Returns whether it took effect. */
    public synchronized boolean reload() {
        if (file == null) {
            return false;
        }
        lastSeen = look(file);
        try {
            AuthFile next = AuthFile.read(file);
            current = next;
            reloads.incrementAndGet();
            log.info("auth file {} reloaded: {} principals", file, next.size());
            return true;
        } catch (AuthFileException e) {
            refusedReloads.incrementAndGet();
            log.warn("{}; keeping the last good auth file ({} principals)", e.getMessage(), current.size());
            return false;
        }
    }

    private void reloadIfChanged() {
        try {
            Object seen = look(file);
            boolean changed;
            synchronized (this) {
                changed = !Objects.equals(seen, lastSeen);
            }
            if (changed) {
                reload();
            }
        } catch (RuntimeException e) {
            log.warn("auth file {}: could not check for changes: {}", file, e.toString());
        }
    }

    /** What identifies this version of the file: modification time, size and file key (a rename gives a new one). */
    private static Object look(Path file) {
        try {
            BasicFileAttributes a = Files.readAttributes(file, BasicFileAttributes.class);
            return java.util.List.of(a.lastModifiedTime(), a.size(), String.valueOf(a.fileKey()));
        } catch (IOException e) {
            return "unreadable: " + e.getClass().getSimpleName();
        }
    }

    /** Reloads that took effect since start. */
    public long reloads() {
        return reloads.get();
    }

    /** Reloads refused (the file was bad) since start. */
    public long refusedReloads() {
        return refusedReloads.get();
    }

    @Override
    public void close() {
        if (poller != null) {
            poller.shutdownNow();
        }
    }
}
