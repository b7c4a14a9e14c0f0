// floor: the cheapest exec gate seccomp user notification allows, the
// yardstick of the run-time layer's cost per execution. It runs
// PROGRAM ARGS with every execve and execveat of the tree reported to it,
// and answers each "continue" at once, reading nothing.
//
//	floor PROGRAM [ARG ...]
//
// As the supervisor does, the filter is installed on one thread, which
// forks the program and ends; the main thread answers, and a third waits
// for the program and exits with its status.
#define _GNU_SOURCE
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static char **args;
static int listener = -1;
static pid_t child;

static void *start(void *unused) {
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_execve, 2, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_execveat, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
	};
	struct sock_fprog prog = {sizeof f / sizeof f[0], f};
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) {
		perror("floor: no_new_privs");
		exit(126);
	}
	listener = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
	if (listener < 0) {
		perror("floor: seccomp");
		exit(126);
	}
	child = fork();
	if (child == 0) {
		execv(args[0], args);
		_exit(127);
	}
	return NULL;
}

static void *reap(void *unused) {
	int st;
	while (waitpid(child, &st, 0) < 0 && errno == EINTR)
		;
	_exit(WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
}

int main(int argc, char **argv) {
	if (argc < 2) {
		fprintf(stderr, "usage: floor PROGRAM [ARG ...]\n");
		return 2;
	}
	args = argv + 1;
	pthread_t t;
	pthread_create(&t, NULL, start, NULL);
	pthread_join(t, NULL);
	pthread_create(&t, NULL, reap, NULL);
	for (;;) {
		struct seccomp_notif req;
		memset(&req, 0, sizeof req);
		if (ioctl(listener, SECCOMP_IOCTL_NOTIF_RECV, &req) < 0) {
			if (errno == EINTR || errno == ENOENT)
				continue;
			perror("floor: receiving");
			return 126;
		}
		struct seccomp_notif_resp resp = {.id = req.id, .flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE};
		ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, &resp);
	}
}
