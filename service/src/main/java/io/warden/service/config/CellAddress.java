package io.warden.service.config;

/** A cell besides the default one (the ensemble of --zk): its name, ZooKeeper connect string and chroot. Concurrency: immutable. */
public record CellAddress(String name, String zkConnect, String chroot) { }
