package io.warden.it.deploy;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.warden.it.support.RepoRoot;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The container files of docs/containers.md, read as the tests need them: {@code deploy/container/Dockerfile} (its
 * instructions, continuation lines joined, comments dropped) and {@code deploy/container/compose.yaml} (its services).
 */
final class ContainerFiles {
    static final Path REPO = RepoRoot.path();
    static final Path DOCKERFILE = REPO.resolve("deploy/container/Dockerfile");
    static final Path COMPOSE = REPO.resolve("deploy/container/compose.yaml");
    static final Path DOCKERIGNORE = REPO.resolve(".dockerignore");
    static final Path UNIT = REPO.resolve("deploy/systemd/warden.service");

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());

    private ContainerFiles() {
    }

    /** One instruction: its keyword in upper case and the rest of its (joined) line. */
    record Instruction(String keyword, String arguments) {
    }

    /** The Dockerfile's instructions in order. */
    static final class Dockerfile {
        final List<Instruction> instructions;

        private Dockerfile(List<Instruction> instructions) {
            this.instructions = List.copyOf(instructions);
        }

        static Dockerfile read() {
            List<Instruction> out = new ArrayList<>();
            StringBuilder current = new StringBuilder();
            for (String line : lines(DOCKERFILE)) {
                String trimmed = line.strip();
                if (trimmed.startsWith("#") || (trimmed.isEmpty() && current.isEmpty())) {
                    continue; // a comment, also between continuation lines, as Docker reads it
                }
                if (trimmed.endsWith("\\")) {
                    current.append(trimmed, 0, trimmed.length() - 1).append(' ');
                    continue;
                }
                current.append(trimmed);
                String joined = current.toString().strip();
                current.setLength(0);
                if (joined.isEmpty()) {
                    continue;
                }
                int space = joined.indexOf(' ');
                out.add(new Instruction(joined.substring(0, space).toUpperCase(java.util.Locale.ROOT),
                        joined.substring(space + 1).strip().replaceAll(" {2,}", " ")));
            }
            return new Dockerfile(out);
        }

        /** The arguments of every instruction with this keyword, in order. */
        List<String> all(String keyword) {
            return instructions.stream().filter(i -> i.keyword().equals(keyword)).map(Instruction::arguments).toList();
        }

        /** The arguments of the one instruction with this keyword; fails when there is not exactly one. */
        String one(String keyword) {
            List<String> all = all(keyword);
            if (all.size() != 1) {
                throw new AssertionError("the Dockerfile has " + all.size() + " " + keyword + " instructions, not one: " + all);
            }
            return all.get(0);
        }

        /** Every {@code ENV NAME=value} (quotes removed), in order. */
        Map<String, String> env() {
            Map<String, String> env = new LinkedHashMap<>();
            Pattern pair = Pattern.compile("([A-Za-z_][A-Za-z0-9_]*)=(\"([^\"]*)\"|(\\S*))");
            for (String args : all("ENV")) {
                Matcher m = pair.matcher(args);
                int end = 0;
                while (m.find()) {
                    if (!args.substring(end, m.start()).isBlank()) {
                        throw new AssertionError("ENV not of NAME=value pairs: " + args);
                    }
                    env.put(m.group(1), m.group(3) != null ? m.group(3) : m.group(4));
                    end = m.end();
                }
                if (!args.substring(end).isBlank()) {
                    throw new AssertionError("ENV not of NAME=value pairs: " + args);
                }
            }
            return env;
        }

        /** An exec-form (JSON array) instruction's words. */
        List<String> execForm(String keyword) {
            try {
                return JSON.readValue(one(keyword), new TypeReference<List<String>>() { });
            } catch (IOException e) {
                throw new AssertionError(keyword + " is not in exec form (a JSON array): " + one(keyword), e);
            }
        }

        /** The shell command of {@code HEALTHCHECK [options] CMD command}. */
        String healthCommand() {
            String args = one("HEALTHCHECK");
            int cmd = args.indexOf("CMD ");
            if (cmd < 0) {
                throw new AssertionError("HEALTHCHECK without CMD: " + args);
            }
            return args.substring(cmd + "CMD ".length()).strip();
        }

        /** {@code COPY source destination} pairs (one source each). */
        List<String[]> copies() {
            List<String[]> copies = new ArrayList<>();
            for (String args : all("COPY")) {
                String[] words = args.split(" ");
                if (words.length != 2 || words[0].startsWith("--")) {
                    throw new AssertionError("COPY of one source without options expected: " + args);
                }
                copies.add(words);
            }
            return copies;
        }
    }

    /** The compose file's services by name. */
    static Map<String, JsonNode> services() {
        try {
            JsonNode root = YAML.readTree(COMPOSE.toFile());
            Map<String, JsonNode> services = new TreeMap<>();
            Iterator<Map.Entry<String, JsonNode>> it = root.path("services").fields();
            it.forEachRemaining(e -> services.put(e.getKey(), e.getValue()));
            return services;
        } catch (IOException e) {
            throw new UncheckedIOException(COMPOSE.toString(), e);
        }
    }

    /** The compose file's top-level {@code volumes:} names. */
    static List<String> declaredVolumes() {
        try {
            List<String> names = new ArrayList<>();
            YAML.readTree(COMPOSE.toFile()).path("volumes").fieldNames().forEachRemaining(names::add);
            return names;
        } catch (IOException e) {
            throw new UncheckedIOException(COMPOSE.toString(), e);
        }
    }

    /** A service's {@code environment:} (a mapping), values as text. */
    static Map<String, String> environment(JsonNode service) {
        Map<String, String> env = new LinkedHashMap<>();
        JsonNode node = service.path("environment");
        if (!node.isMissingNode() && !node.isObject()) {
            throw new AssertionError("environment: as a mapping expected, got " + node);
        }
        node.fields().forEachRemaining(e -> env.put(e.getKey(), e.getValue().asText()));
        return env;
    }

    /** The ZooKeeper servers (services with {@code ZOO_MY_ID}) and the gateways (built from the Dockerfile). */
    static Map<String, JsonNode> zookeeperServices() {
        Map<String, JsonNode> zk = new TreeMap<>();
        services().forEach((name, s) -> {
            if (environment(s).containsKey("ZOO_MY_ID")) {
                zk.put(name, s);
            }
        });
        return zk;
    }

    static Map<String, JsonNode> gatewayServices() {
        Map<String, JsonNode> gw = new TreeMap<>();
        services().forEach((name, s) -> {
            if (s.has("build")) {
                gw.put(name, s);
            }
        });
        return gw;
    }

    /** {@code host:port} entries of a {@code WARDEN_ZK_CONNECT}. */
    static List<String[]> hostPorts(String connect) {
        List<String[]> out = new ArrayList<>();
        for (String hp : connect.split(",")) {
            int colon = hp.lastIndexOf(':');
            out.add(new String[] {hp.substring(0, colon), hp.substring(colon + 1)});
        }
        return out;
    }

    /** {@code server.N=host:quorumPort:electionPort;clientPort} entries of a {@code ZOO_SERVERS}, by N. */
    static Map<Integer, String[]> zooServers(String servers) {
        Pattern line = Pattern.compile("server\\.(\\d+)=([A-Za-z0-9.-]+):(\\d+):(\\d+);(\\d+)");
        Map<Integer, String[]> out = new TreeMap<>();
        for (String entry : servers.strip().split("\\s+")) {
            Matcher m = line.matcher(entry);
            if (!m.matches()) {
                throw new AssertionError("not server.N=host:quorum:election;client: " + entry);
            }
            String[] was = out.put(Integer.parseInt(m.group(1)),
                    new String[] {m.group(2), m.group(3), m.group(4), m.group(5)});
            if (was != null) {
                throw new AssertionError("server." + m.group(1) + " twice in " + servers);
            }
        }
        return out;
    }

    static List<String> lines(Path file) {
        try {
            return Files.readAllLines(file, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(file.toString(), e);
        }
    }
}
