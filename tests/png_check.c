/*
 * png_check.c — `png_check FILE.png`: reads a PNG (8-bit grey, grey and
 * alpha, RGB or RGBA, not interlaced: what rsvg-convert and Chromium's
 * screenshots write) and prints "WxH, N pixels differ from the first"
 * on one line.  Exits 0 when the picture is not blank (over 0.1% of its
 * pixels differ from the first one), 1 when it is blank, 2 when FILE is
 * not such a PNG.  The suite's checks that a picture was drawn
 * (tests/cli/show_pictures.sh, tests/cli/compare_html.sh) read it; zlib
 * inflates the image data.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

static uint32_t be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 |
           p[3];
}

static unsigned char *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    unsigned char *buf = NULL;
    size_t cap = 0;
    *n = 0;
    if (!f)
        return NULL;
    for (;;) {
        if (*n == cap) {
            cap = cap ? 2 * cap : 1 << 16;
            unsigned char *b = realloc(buf, cap);
            if (!b)
                break;
            buf = b;
        }
        size_t got = fread(buf + *n, 1, cap - *n, f);
        *n += got;
        if (got == 0)
            break;
    }
    fclose(f);
    return buf;
}

static int paeth(int a, int b, int c)
{
    int p = a + b - c, pa = abs(p - a), pb = abs(p - b), pc = abs(p - c);
    return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
}

/* Undoes the filter of each scanline in place; -1 for a bad filter. */
static int unfilter(unsigned char *raw, uint32_t w, uint32_t h, int bpp)
{
    size_t stride = (size_t)w * (size_t)bpp;
    unsigned char *prev = NULL;
    for (uint32_t y = 0; y < h; y++) {
        unsigned char *line = raw + y * (stride + 1), *px = line + 1;
        int type = line[0];
        for (size_t i = 0; i < stride; i++) {
            int a = i >= (size_t)bpp ? px[i - (size_t)bpp] : 0;
            int b = prev ? prev[i] : 0;
            int c = prev && i >= (size_t)bpp ? prev[i - (size_t)bpp] : 0;
            int v = type == 0   ? 0
                    : type == 1 ? a
                    : type == 2 ? b
                    : type == 3 ? (a + b) / 2
                    : type == 4 ? paeth(a, b, c)
                                : -1;
            if (v < 0)
                return -1;
            px[i] = (unsigned char)(px[i] + v);
        }
        prev = px;
    }
    return 0;
}

int main(int argc, char **argv)
{
    size_t n, idat = 0;
    unsigned char *png = argc == 2 ? slurp(argv[1], &n) : NULL;
    if (!png || n < 33 || memcmp(png, "\x89PNG\r\n\x1a\n", 8) != 0) {
        fprintf(stderr, "png_check: %s: not a PNG\n", argc == 2 ? argv[1] : "");
        return 2;
    }
    uint32_t w = be32(png + 16), h = be32(png + 20);
    int depth = png[24], colour = png[25], interlace = png[28];
    int channels = colour == 0   ? 1
                   : colour == 2 ? 3
                   : colour == 4 ? 2
                   : colour == 6 ? 4
                                 : 0;
    if (depth != 8 || !channels || interlace || !w || !h || w > 20000 ||
        h > 20000) {
        fprintf(stderr,
                "png_check: %s: not an 8-bit, non-interlaced grey "
                "or RGB(A) PNG\n",
                argv[1]);
        return 2;
    }
    unsigned char *z = malloc(n);
    for (size_t p = 8; z && p + 12 <= n;) {
        uint32_t len = be32(png + p);
        if (len > n - p - 12)
            break;
        if (memcmp(png + p + 4, "IDAT", 4) == 0) {
            memcpy(z + idat, png + p + 8, len);
            idat += len;
        }
        p += 12 + (size_t)len;
    }
    uLongf size = (uLongf)h * ((uLongf)w * (uLongf)channels + 1);
    unsigned char *raw = malloc(size);
    if (!z || !raw || uncompress(raw, &size, z, (uLong)idat) != Z_OK ||
        size != (uLongf)h * ((uLongf)w * (uLongf)channels + 1) ||
        unfilter(raw, w, h, channels) != 0) {
        fprintf(stderr, "png_check: %s: its image data do not inflate\n",
                argv[1]);
        return 2;
    }
    size_t stride = (size_t)w * (size_t)channels + 1, differ = 0;
    for (uint32_t y = 0; y < h; y++)
        for (uint32_t x = 0; x < w; x++)
            differ += memcmp(raw + y * stride + 1 + x * (size_t)channels,
                             raw + 1, (size_t)channels) != 0;
    printf("%ux%u, %zu pixels differ from the first\n", w, h, differ);
    free(raw);
    free(z);
    free(png);
    return differ * 1000 > (size_t)w * h ? 0 : 1;
}
