/*
 * xf_key.c -- the key of aes-256-gcm, read from the file [xform] key_file
 * names: 32 raw bytes, or 64 hexadecimal digits (a trailing newline or
 * blanks allowed). Never stored in the database, never logged.
 *
 * The file must be a regular file that others (neither owner nor group)
 * can neither read nor write: a key anyone on the machine can read
 * protects nothing, so it is refused rather than used. Symbolic links are
 * followed (secrets are often mounted that way); the checks apply to the
 * file opened.
 *
 * The key id is the first 4 bytes of SHA-256("pgnfs-xform key id 1" ||
 * key): stored with every encrypted chunk, so that a chunk encrypted
 * under another key is reported as exactly that.
 *
 * NOTES
 *   Every buffer that held key bytes is cleansed (OPENSSL_cleanse) on
 *   every path.
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include "xf_int.h"

static int xf_hexval(unsigned char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* The key's bytes from the file's contents (n bytes at buf). */
static int xf_key_parse(const char *path, const unsigned char *buf, size_t n,
                        unsigned char key[XF_KEY_LEN], xf_err *err)
{
    if (n == XF_KEY_LEN) {
        memcpy(key, buf, XF_KEY_LEN);
        return 0;
    }
    while (n > 0 &&
           (buf[n - 1] == '\n' || buf[n - 1] == '\r' || buf[n - 1] == ' ' || buf[n - 1] == '\t'))
        n--;
    if (n == 2 * XF_KEY_LEN) {
        for (size_t i = 0; i < XF_KEY_LEN; i++) {
            int hi = xf_hexval(buf[2 * i]), lo = xf_hexval(buf[2 * i + 1]);

            if (hi < 0 || lo < 0) {
                xf_errf(err, "key file %s: not a hexadecimal digit at offset %zu", path,
                        hi < 0 ? 2 * i : 2 * i + 1);
                return -EINVAL;
            }
            key[i] = (unsigned char)(hi << 4 | lo);
        }
        return 0;
    }
    xf_errf(err,
            "key file %s must hold 32 raw bytes or 64 hexadecimal digits "
            "(it holds %zu bytes)",
            path, n);
    return -EINVAL;
}

/* xf_key_load -- see xf_int.h. Returns 0, -ENOENT/-EACCES/-EIO (the
 * file), -EACCES (others may read or write it), -EINVAL (not a regular
 * file, wrong length or digits), -ENOMEM. */
int xf_key_load(const char *path, unsigned char key[XF_KEY_LEN], uint32_t *key_id, xf_err *err)
{
    static const char domain[] = "pgnfs-xform key id 1";
    unsigned char buf[2 * XF_KEY_LEN + 8], md[EVP_MAX_MD_SIZE], in[sizeof domain + XF_KEY_LEN];
    unsigned int mdlen = 0;
    struct stat st;
    size_t n = 0;
    ssize_t r;
    int fd, rc;

    fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) {
        rc = -errno;
        xf_errf(err, "key file %s: cannot open: %s", path, strerror(errno));
        return rc;
    }
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        xf_errf(err, "key file %s is not a regular file", path);
        close(fd);
        return -EINVAL;
    }
    if (st.st_mode & (S_IROTH | S_IWOTH)) {
        xf_errf(err,
                "key file %s is %s by others (mode %04o): refused; "
                "chmod o-rwx it (600 is usual)",
                path, st.st_mode & S_IROTH ? "readable" : "writable",
                (unsigned)(st.st_mode & 07777));
        close(fd);
        return -EACCES;
    }
    for (;;) {
        r = read(fd, buf + n, sizeof buf - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        n += (size_t)r;
        if (n == sizeof buf)
            break;
    }
    rc = r < 0 ? -errno : 0;
    close(fd);
    if (rc < 0) {
        xf_errf(err, "key file %s: cannot read: %s", path, strerror(-rc));
        goto out;
    }
    if (n == sizeof buf) {
        xf_errf(err, "key file %s must hold 32 raw bytes or 64 hexadecimal digits (it is longer)",
                path);
        rc = -EINVAL;
        goto out;
    }
    rc = xf_key_parse(path, buf, n, key, err);
    if (rc < 0)
        goto out;
    memcpy(in, domain, sizeof domain - 1);
    memcpy(in + sizeof domain - 1, key, XF_KEY_LEN);
    if (!EVP_Digest(in, sizeof domain - 1 + XF_KEY_LEN, md, &mdlen, EVP_sha256(), NULL)) {
        xf_errf(err, "key file %s: cannot compute the key id (libcrypto)", path);
        rc = -ENOMEM;
        goto out;
    }
    *key_id = xf_get32(md);
out:
    OPENSSL_cleanse(buf, sizeof buf);
    OPENSSL_cleanse(in, sizeof in);
    OPENSSL_cleanse(md, sizeof md);
    if (rc < 0)
        OPENSSL_cleanse(key, XF_KEY_LEN);
    return rc;
}
