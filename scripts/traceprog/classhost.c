/*
 * classhost: opens a plugin with dlopen(RTLD_LOCAL) and runs it, as a Python interpreter runs an extension
 * module or a JVM a JNI library: the plugin's libOpenCL is then in a local scope, which the global scope
 * (where LD_PRELOAD's exports are) does not see. Usage: classhost PLUGIN.so ARGS... (the plugin's
 * classprog_main gets ARGS, with the plugin's path as its argv[0]).
 */
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char **argv) {
	if (argc < 2) {
		fprintf(stderr, "usage: %s PLUGIN.so ARGS...\n", argv[0]);
		return 2;
	}
	void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		fprintf(stderr, "classhost: %s\n", dlerror());
		return 3;
	}
	int (*entry)(int, char **) = (int (*)(int, char **))dlsym(h, "classprog_main");
	if (!entry) {
		fprintf(stderr, "classhost: %s has no classprog_main\n", argv[1]);
		return 3;
	}
	return entry(argc - 1, argv + 1);
}
