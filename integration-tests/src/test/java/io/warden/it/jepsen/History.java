package io.warden.it.jepsen;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * A history on disk: one {@link Op} per line as JSON ({@code {"id":0,"process":"c1","key":"ns/a","kind":"ACQUIRE",...}}),
 * the format every run of the suite writes beside its report, so that a failing run can be checked again, or read by
 * other tools, without running it again.
 *
 * <p>Concurrency: a writer is used by one thread (the recorder that owns it).
 */
public final class History {
    private static final ObjectMapper JSON = new ObjectMapper();

    private History() {
    }

    public static void write(Path file, List<Op> ops) {
        try (BufferedWriter out = Files.newBufferedWriter(file, StandardCharsets.UTF_8)) {
            for (Op op : ops) {
                out.write(JSON.writeValueAsString(op));
                out.newLine();
            }
        } catch (IOException e) {
            throw new UncheckedIOException("writing the history " + file, e);
        }
    }

    public static List<Op> read(Path file) {
        List<Op> ops = new ArrayList<>();
        try {
            for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
                if (!line.isBlank()) {
                    ops.add(JSON.readValue(line, Op.class));
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException("reading the history " + file, e);
        }
        return ops;
    }
}
