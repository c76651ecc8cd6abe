package execdriver

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// maskedPaths are hidden from every task, as a container runtime hides them: kernel memory,
// the keyring, timers and schedulers that leak what other workloads do, and firmware. A file
// is covered by /dev/null, a directory by an empty read-only tmpfs.
var maskedPaths = []string{
	"/proc/acpi", "/proc/asound", "/proc/interrupts", "/proc/kcore", "/proc/keys",
	"/proc/latency_stats", "/proc/sched_debug", "/proc/scsi", "/proc/timer_list",
	"/proc/timer_stats", "/sys/devices/virtual/powercap", "/sys/firmware",
}

// readonlyPaths are the kernel's knobs under /proc. /proc/sys matters most: a uid 0 task
// needs no capability to write kernel.core_pattern there, and the kernel runs the program it
// names as root of the host for every crash.
var readonlyPaths = []string{"/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger"}

// secretPaths are host secrets that a chroot_env entry (upstream's default binds all of /etc)
// would otherwise show to a task, readable by a root one: password hashes, sudo's rules, the
// SSH host keys, TLS private keys and the configuration directories of the agents, which
// hold tokens and keys. Patterns are shell globs.
var secretPaths = []string{
	"/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-",
	"/etc/sudoers", "/etc/sudoers.d", "/etc/security/opasswd",
	"/etc/ssh/ssh_host_*_key", "/etc/ssl/private", "/etc/pki/tls/private", "/etc/krb5.keytab",
	"/etc/nomad.d", "/etc/consul.d", "/etc/vault.d",
}

// hardenMounts runs in the task's root, before the capabilities are dropped. It masks and
// makes read-only the kernel's paths, masks the host's secrets, and makes /dev read-only so
// that CAP_MKNOD (in a root task's default set) creates no device node anywhere it could
// be opened: every other writable mount of the chroot is nodev.
func hardenMounts() error {
	for _, p := range maskedPaths {
		if err := mask(p); err != nil {
			return err
		}
	}
	for _, p := range readonlyPaths {
		if err := readOnly(p); err != nil {
			return err
		}
	}
	for _, pattern := range secretPaths {
		matches, err := filepath.Glob(pattern)
		if err != nil {
			return fmt.Errorf("masking %s: %w", pattern, err)
		}
		for _, p := range matches {
			if err := mask(p); err != nil {
				return err
			}
		}
	}
	if err := unix.Mount("", "/dev", "", unix.MS_REMOUNT|unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_STRICTATIME, ""); err != nil {
		return fmt.Errorf("making /dev read-only: %w", err)
	}
	return nil
}

// mask hides path: a directory under an empty read-only tmpfs, anything else under
// /dev/null. A path the host lacks is left alone, and so is a link: what it points to is
// masked by its own entry, or is not a secret.
func mask(path string) error {
	st, err := os.Lstat(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("masking %s: %w", path, err)
	case st.Mode()&os.ModeSymlink != 0:
		return nil
	case st.IsDir():
		err = unix.Mount("tmpfs", path, "tmpfs", unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "size=4k,mode=555")
	default:
		err = unix.Mount("/dev/null", path, "", unix.MS_BIND, "")
	}
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("masking %s: %w", path, err)
	}
	return nil
}

// readOnly makes path a read-only mount of itself.
func readOnly(path string) error {
	if _, err := os.Lstat(path); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err := unix.Mount(path, path, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("binding %s: %w", path, err)
	}
	flags := uintptr(unix.MS_BIND | unix.MS_REMOUNT | unix.MS_RDONLY | unix.MS_NOSUID | unix.MS_NODEV | unix.MS_NOEXEC)
	if err := unix.Mount("", path, "", flags, ""); err != nil {
		return fmt.Errorf("making %s read-only: %w", path, err)
	}
	return nil
}
