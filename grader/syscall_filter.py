"""The system calls a sandboxed child may make: an allow-list, compiled once per run into a seccomp BPF program.

Compiled here, in the grader, with libseccomp (through `pyseccomp`, its ctypes bindings; Debian's libseccomp2), and
handed to the warm server as bytes; each child installs it (grader.inside_sandbox.fork_server) after its own
namespaces, files, user id and limits are set and before it runs anything of the student's: two prctl calls.
Everything the child starts inherits it.

The list is what a Python process running torch, numpy and IPython uses: files and folders, memory, processes and
threads, signals, clocks, pipes and sockets, SysV and POSIX IPC. Anything else is refused with EPERM (clone3 with
ENOSYS, so that the C library falls back to clone, whose flags are checked), among it everything Docker's default
profile refuses: keyrings (add_key, keyctl, request_key), new namespaces (unshare, setns, clone with a CLONE_NEW*
flag), mount and umount, pivot_root and chroot, bpf, perf_event_open, userfaultfd, io_uring, kernel modules and
kexec, ptrace and reading or writing another process's memory, the clock, swap, reboot, quotas, and every
personality but Linux's own. Nor what a child does not need and could trouble the machine or the others with: sync
and syncfs (flushing the host's disks), inotify (watching the files every child shares), Linux AIO. Sockets: only
Unix, IPv4, IPv6 and routing netlink (inside the child's own network namespace, with loopback only).
"""

from __future__ import annotations

import errno
import tempfile
from functools import cache

FILES = """
read write readv writev pread64 pwrite64 preadv pwritev preadv2 pwritev2 lseek open openat openat2 creat close
close_range dup dup2 dup3 fcntl flock fsync fdatasync sync_file_range truncate ftruncate fallocate
fadvise64 readahead stat fstat lstat newfstatat statx statfs fstatfs access faccessat faccessat2 readlink readlinkat
getdents getdents64 getcwd chdir fchdir rename renameat renameat2 mkdir mkdirat rmdir unlink unlinkat link linkat
symlink symlinkat chmod fchmod fchmodat chown fchown lchown fchownat umask utime utimes utimensat futimesat mknod
mknodat getxattr lgetxattr fgetxattr listxattr llistxattr flistxattr setxattr lsetxattr fsetxattr removexattr
lremovexattr fremovexattr ioctl sendfile splice tee copy_file_range pipe pipe2 memfd_create
"""
WAITING = """
poll ppoll select pselect6 epoll_create epoll_create1 epoll_ctl epoll_wait epoll_pwait epoll_pwait2 eventfd eventfd2
signalfd signalfd4 timerfd_create timerfd_settime timerfd_gettime futex futex_waitv
"""
MEMORY = """
brk mmap munmap mremap mprotect madvise mincore msync mlock mlock2 munlock mlockall munlockall membarrier
get_mempolicy set_mempolicy mbind
"""
PROCESSES = """
fork vfork execve execveat exit exit_group wait4 waitid kill tkill tgkill rt_sigqueueinfo rt_tgsigqueueinfo
pidfd_open pidfd_send_signal getpid getppid gettid getpgid setpgid getpgrp getsid setsid getuid geteuid getgid
getegid getresuid getresgid getgroups capget prctl arch_prctl set_tid_address set_robust_list get_robust_list rseq
sched_yield sched_getaffinity sched_setaffinity sched_getparam sched_setparam sched_getscheduler sched_setscheduler
sched_get_priority_max sched_get_priority_min sched_rr_get_interval sched_getattr sched_setattr getpriority
setpriority ioprio_get getrlimit setrlimit prlimit64 getrusage times sysinfo uname getrandom getcpu restart_syscall
"""
SIGNALS_AND_CLOCKS = """
rt_sigaction rt_sigprocmask rt_sigreturn rt_sigpending rt_sigtimedwait rt_sigsuspend sigaltstack pause nanosleep
clock_nanosleep clock_gettime clock_getres gettimeofday time alarm getitimer setitimer timer_create timer_settime
timer_gettime timer_getoverrun timer_delete
"""
IPC = """
socketpair bind listen accept accept4 connect getsockname getpeername sendto recvfrom sendmsg recvmsg sendmmsg
recvmmsg shutdown setsockopt getsockopt shmget shmat shmdt shmctl semget semop semtimedop semctl msgget msgsnd msgrcv
msgctl mq_open mq_unlink mq_timedsend mq_timedreceive mq_notify mq_getsetattr
"""
ALLOWED = tuple(" ".join([FILES, WAITING, MEMORY, PROCESSES, SIGNALS_AND_CLOCKS, IPC]).split())

# clone: allowed without any flag that makes a namespace (Docker's mask: NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER,
# NEWPID, NEWNET).
CLONE_NEW_ANY = 0x7E020000
SOCKET_DOMAINS = {1: None, 2: None, 10: None, 16: 0}  # AF_UNIX, AF_INET, AF_INET6; AF_NETLINK with NETLINK_ROUTE only
PERSONALITIES = (0x0, 0x8, 0x20000, 0x20008, 0xFFFFFFFF)  # Linux, its 32-bit-time variant, UNAME26; and asking


@cache
def compiled() -> bytes:
    """The filter as a BPF program for this machine's architecture (struct sock_filter entries, 8 bytes each)."""
    import pyseccomp as seccomp

    refuse = seccomp.ERRNO(errno.EPERM)
    rules = seccomp.SyscallFilter(refuse)
    rules.set_attr(seccomp.Attr.CTL_OPTIMIZE, 2)  # a binary tree: the check per call is a few comparisons
    for name in ALLOWED:
        rules.add_rule(seccomp.ALLOW, name)
    rules.add_rule(seccomp.ALLOW, "clone", seccomp.Arg(0, seccomp.MASKED_EQ, CLONE_NEW_ANY, 0))
    rules.add_rule(seccomp.ERRNO(errno.ENOSYS), "clone3")  # its flags cannot be read: the C library falls back
    for domain, protocol in SOCKET_DOMAINS.items():
        arguments = [seccomp.Arg(0, seccomp.EQ, domain)]
        if protocol is not None:
            arguments.append(seccomp.Arg(2, seccomp.EQ, protocol))
        rules.add_rule(seccomp.ALLOW, "socket", *arguments)
    for persona in PERSONALITIES:
        rules.add_rule(seccomp.ALLOW, "personality", seccomp.Arg(0, seccomp.EQ, persona))
    with tempfile.TemporaryFile() as program:
        rules.export_bpf(program)
        program.seek(0)
        return program.read()
