package io.warden.service.cell;

import io.warden.service.zk.Json;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.time.Instant;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A cell's high-water mark on disk: {@code <data-dir>/high-water/<cell id>.json}, {@code {cell_id, token, zxid, floor,
 * gateway, written_at}}. Only {@code token} is read back; the rest is for people.
 *
 * <p>Written whole to a temporary file, forced to disk, and renamed over the old one (atomic on POSIX file systems), so
 * a crash leaves the old mark or the new one, never half a file. Gateways sharing a data directory (several on one
 * host) never lower each other's mark: a write takes the larger of its own and the file's, under a file lock (and, in
 * one JVM, a monitor per file, since file locks are per process).
 *
 * <p>Concurrency: {@link #write} and {@link #read} may be called from any thread.
 */
final class HighWaterFile {
    private static final Map<Path, Object> MONITORS = new ConcurrentHashMap<>();

    private final Path file;
    private final Path lock;
    private final String cellId;

    HighWaterFile(Path dataDir, String cellId) {
        Path dir = dataDir.resolve("high-water").toAbsolutePath().normalize();
        this.file = dir.resolve(cellId + ".json");
        this.lock = dir.resolve(cellId + ".lock");
        this.cellId = cellId;
    }

    Path path() {
        return file;
    }

    /** What the file says, as it is stored. */
    record Stored(String cellId, long token, long zxid, long floor, String gateway, String writtenAt) {
    }

    /** The remembered token, or empty when there is no file. A file that is not a mark stops the caller. */
    OptionalLong read() {
        byte[] bytes;
        try {
            bytes = Files.readAllBytes(file);
        } catch (NoSuchFileException e) {
            return OptionalLong.empty();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read the high-water mark " + file, e);
        }
        Stored stored = Json.readOrNull(bytes, Stored.class);
        if (stored == null || stored.token() < 0) {
            throw new IllegalStateException("the high-water mark " + file + " is not what a gateway writes ("
                    + new String(bytes, 0, Math.min(bytes.length, 80), java.nio.charset.StandardCharsets.UTF_8)
                    + "); it is this gateway's evidence of how far the cell got, so it is not ignored: restore it, or "
                    + "see docs/operations.md, \"Recovering from a rolled-back ensemble\"");
        }
        return OptionalLong.of(stored.token());
    }

    /** Writes {@code token} (or the file's, when larger) and its context atomically, and forces it to disk. */
    void write(long token, long zxid, long floor, String gateway) {
        synchronized (MONITORS.computeIfAbsent(file, f -> new Object())) {
            try {
                Files.createDirectories(file.getParent());
                try (FileChannel channel = FileChannel.open(lock, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
                     FileLock ignored = channel.lock()) {
                    long keep = Math.max(token, read().orElse(0));
                    byte[] data = Json.write(new Stored(cellId, keep, zxid, floor, gateway, Instant.now().toString()));
                    Path temp = file.resolveSibling(file.getFileName() + ".tmp");
                    try (FileChannel out = FileChannel.open(temp, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                            StandardOpenOption.TRUNCATE_EXISTING)) {
                        ByteBuffer buffer = ByteBuffer.wrap(data);
                        while (buffer.hasRemaining()) {
                            out.write(buffer);
                        }
                        out.force(true);
                    }
                    try {
                        Files.move(temp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
                    } catch (AtomicMoveNotSupportedException e) {
                        Files.move(temp, file, StandardCopyOption.REPLACE_EXISTING);
                    }
                    forceDirectory(file.getParent());
                }
            } catch (IOException e) {
                throw new UncheckedIOException("cannot write the high-water mark " + file, e);
            }
        }
    }

    /** Makes the rename durable (Linux: fsync of the directory); where a directory cannot be opened, nothing. */
    private static void forceDirectory(Path dir) {
        try (FileChannel channel = FileChannel.open(dir, StandardOpenOption.READ)) {
            channel.force(true);
        } catch (IOException | UnsupportedOperationException e) {
            // not possible on this platform: the rename is durable at the file system's next commit
        }
    }
}
