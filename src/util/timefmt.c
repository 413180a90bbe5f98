/* timefmt.c - RFC 3339 parse/format for int64 nanoseconds (see timefmt.h).
 * Uses the days-from-civil algorithm, no libc time zone machinery. */
#include "util/timefmt.h"

static int64_t days_from_civil(int64_t y, unsigned m, unsigned d)
{
    y -= m <= 2;
    const int64_t era = (y >= 0 ? y : y - 399) / 400;
    const unsigned yoe = (unsigned)(y - era * 400);
    const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + (int64_t)doe - 719468;
}

static void civil_from_days(int64_t z, int64_t *y, unsigned *m, unsigned *d)
{
    z += 719468;
    const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    const unsigned doe = (unsigned)(z - era * 146097);
    const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    const unsigned mp = (5 * doy + 2) / 153;
    *d = doy - (153 * mp + 2) / 5 + 1;
    *m = mp < 10 ? mp + 3 : mp - 9;
    *y = (int64_t)yoe + era * 400 + (*m <= 2);
}

static int digits(const char *s, size_t n, size_t at, size_t k, unsigned *out)
{
    if (at + k > n)
        return -1;
    unsigned v = 0;
    for (size_t i = 0; i < k; i++) {
        char c = s[at + i];
        if (c < '0' || c > '9')
            return -1;
        v = v * 10 + (unsigned)(c - '0');
    }
    *out = v;
    return 0;
}

static unsigned days_in_month(int64_t y, unsigned m)
{
    static const unsigned dm[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (m == 2 && ((y % 4 == 0 && y % 100 != 0) || y % 400 == 0))
        return 29;
    return dm[m - 1];
}

int qr_time_parse(const char *s, size_t n, int64_t *ns, const char **why)
{
    unsigned Y, M, D, h, mi, sec;
    if (digits(s, n, 0, 4, &Y) || n < 19 || s[4] != '-' || digits(s, n, 5, 2, &M) || s[7] != '-' ||
        digits(s, n, 8, 2, &D) || (s[10] != 'T' && s[10] != ' ' && s[10] != 't') ||
        digits(s, n, 11, 2, &h) || s[13] != ':' || digits(s, n, 14, 2, &mi) || s[16] != ':' ||
        digits(s, n, 17, 2, &sec)) {
        *why = "expected RFC 3339 timestamp YYYY-MM-DDTHH:MM:SS[.fffffffff][Z|+HH:MM]";
        return -1;
    }
    if (M < 1 || M > 12 || D < 1 || D > days_in_month(Y, M) || h > 23 || mi > 59 || sec > 59) {
        *why = "timestamp field out of range";
        return -1;
    }
    size_t i = 19;
    int64_t frac = 0;
    if (i < n && s[i] == '.') {
        i++;
        unsigned nd = 0;
        while (i < n && s[i] >= '0' && s[i] <= '9') {
            if (nd == 9) {
                *why = "more than 9 fractional second digits";
                return -1;
            }
            frac = frac * 10 + (s[i] - '0');
            nd++;
            i++;
        }
        if (nd == 0) {
            *why = "no digits after '.' in timestamp";
            return -1;
        }
        for (; nd < 9; nd++)
            frac *= 10;
    }
    int64_t offset_s = 0;
    if (i < n && (s[i] == 'Z' || s[i] == 'z')) {
        i++;
    } else if (i < n && (s[i] == '+' || s[i] == '-')) {
        unsigned oh, om;
        if (digits(s, n, i + 1, 2, &oh) || i + 3 >= n || s[i + 3] != ':' ||
            digits(s, n, i + 4, 2, &om) || oh > 23 || om > 59) {
            *why = "bad time zone offset, expected +HH:MM";
            return -1;
        }
        offset_s = (int64_t)(oh * 3600 + om * 60) * (s[i] == '-' ? -1 : 1);
        i += 6;
    }
    if (i != n) {
        *why = "trailing characters after timestamp";
        return -1;
    }
    if (Y < 1678 || Y > 2261) {
        *why = "timestamp year outside 1678..2261";
        return -1;
    }
    int64_t days = days_from_civil(Y, M, D);
    int64_t secs = days * 86400 + h * 3600 + mi * 60 + sec - offset_s;
    /* guard int64 nanosecond range: about 1677-09-21 .. 2262-04-11 */
    if (secs > INT64_MAX / 1000000000LL - 1 || secs < INT64_MIN / 1000000000LL + 1) {
        *why = "timestamp outside the nanosecond range";
        return -1;
    }
    *ns = secs * 1000000000LL + frac;
    return 0;
}

void qr_time_format(int64_t t, char *out)
{
    int64_t secs = t / 1000000000LL, frac = t % 1000000000LL;
    if (frac < 0) {
        frac += 1000000000LL;
        secs -= 1;
    }
    int64_t days = secs / 86400, rem = secs % 86400;
    if (rem < 0) {
        rem += 86400;
        days -= 1;
    }
    int64_t y;
    unsigned m, d;
    civil_from_days(days, &y, &m, &d);
    unsigned h = (unsigned)(rem / 3600), mi = (unsigned)(rem % 3600 / 60), s = (unsigned)(rem % 60);
    char *p = out;
    unsigned yy = (unsigned)y;
    p[0] = (char)('0' + yy / 1000 % 10);
    p[1] = (char)('0' + yy / 100 % 10);
    p[2] = (char)('0' + yy / 10 % 10);
    p[3] = (char)('0' + yy % 10);
    p[4] = '-';
    p[5] = (char)('0' + m / 10);
    p[6] = (char)('0' + m % 10);
    p[7] = '-';
    p[8] = (char)('0' + d / 10);
    p[9] = (char)('0' + d % 10);
    p[10] = 'T';
    p[11] = (char)('0' + h / 10);
    p[12] = (char)('0' + h % 10);
    p[13] = ':';
    p[14] = (char)('0' + mi / 10);
    p[15] = (char)('0' + mi % 10);
    p[16] = ':';
    p[17] = (char)('0' + s / 10);
    p[18] = (char)('0' + s % 10);
    p[19] = '.';
    uint64_t f = (uint64_t)frac;
    for (int i = 28; i >= 20; i--) {
        p[i] = (char)('0' + f % 10);
        f /= 10;
    }
    p[29] = 'Z';
}
