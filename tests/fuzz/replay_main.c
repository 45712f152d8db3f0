/* Replays a kept fuzz corpus through a fuzz target's entry point, so every build (including
 * the sanitizer build) re-checks each input that once found new coverage. Arguments are files
 * or directories of files. Exits non-zero if an argument cannot be read; a bug in the target
 * shows up as a sanitizer abort or a crash. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return -1;
	if (fseek(f, 0, SEEK_END) != 0) {
		fclose(f);
		return -1;
	}
	long len = ftell(f);
	rewind(f);
	/* An exact-size heap copy so ASan sees any read past the input. */
	uint8_t *buf = malloc(len > 0 ? (size_t)len : 1);
	size_t got = buf ? fread(buf, 1, (size_t)len, f) : 0;
	fclose(f);
	if (!buf || got != (size_t)len) {
		free(buf);
		return -1;
	}
	LLVMFuzzerTestOneInput(buf, (size_t)len);
	free(buf);
	return 0;
}

static int replay_path(const char *path, unsigned *count)
{
	struct stat st;
	if (stat(path, &st) != 0)
		return -1;
	if (!S_ISDIR(st.st_mode)) {
		(*count)++;
		return replay_file(path);
	}
	DIR *d = opendir(path);
	if (!d)
		return -1;
	int rc = 0;
	for (struct dirent *e; rc == 0 && (e = readdir(d)) != NULL;) {
		if (e->d_name[0] == '.')
			continue;
		char child[4096];
		snprintf(child, sizeof(child), "%s/%s", path, e->d_name);
		rc = replay_path(child, count);
	}
	closedir(d);
	return rc;
}

int main(int argc, char **argv)
{
	unsigned count = 0;
	for (int i = 1; i < argc; i++) {
		if (replay_path(argv[i], &count) != 0) {
			fprintf(stderr, "replay: cannot read %s\n", argv[i]);
			return 2;
		}
	}
	if (count == 0) {
		fprintf(stderr, "replay: empty corpus\n");
		return 2;
	}
	printf("replayed %u inputs\n", count);
	return 0;
}
