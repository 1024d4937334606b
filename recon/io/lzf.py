"""LZF decompression (liblzf's block format, as PCD ``binary_compressed`` stores it)."""

from __future__ import annotations

MAX_RATIO = 88
"""The most one compressed byte can expand to: a 3-byte back reference copies at most 264 bytes."""


def lzf_decompress(src: bytes, out_len: int) -> bytes:
    """Decompress one LZF block (liblzf's format, as PCD ``binary_compressed`` stores it): with the C library of
    the ``python-lzf`` package when installed, else in pure Python (same result, about 100x slower).

    A size no ``src`` can decompress to is refused before anything is allocated (python-lzf crashes the process
    when it cannot allocate ``out_len`` bytes)."""
    if out_len < 0 or out_len > MAX_RATIO * len(src):
        raise ValueError(f"LZF size {out_len} is impossible for {len(src)} compressed bytes")
    try:
        import lzf
    except ImportError:
        return lzf_decompress_py(src, out_len)
    out = lzf.decompress(bytes(src), out_len + 1) if out_len else b""
    if out is None or len(out) != out_len:
        # corrupt data or a size mismatch: the pure-Python decoder says precisely what is wrong
        return lzf_decompress_py(src, out_len)
    return out


def lzf_decompress_py(src: bytes, out_len: int) -> bytes:
    """Pure-Python LZF decoder (the reference for ``lzf_decompress``)."""
    out = bytearray(out_len)
    ip, op, n = 0, 0, len(src)
    while ip < n:
        ctrl = src[ip]
        ip += 1
        if ctrl < 32:  # literal run of ctrl + 1 bytes
            ln = ctrl + 1
            if ip + ln > n or op + ln > out_len:
                raise ValueError("LZF literal run past the end of the data")
            out[op : op + ln] = src[ip : ip + ln]
            ip += ln
            op += ln
        else:  # back reference
            ln = ctrl >> 5
            if ln == 7:
                ln += src[ip]
                ip += 1
            ref = op - ((ctrl & 0x1F) << 8) - src[ip] - 1
            ip += 1
            ln += 2
            if ref < 0 or op + ln > out_len:
                raise ValueError("LZF back reference outside the data")
            if op - ref >= ln:
                out[op : op + ln] = out[ref : ref + ln]
            else:  # overlapping copy: repeat the period
                period = op - ref
                chunk = bytes(out[ref:op])
                reps = -(-ln // period)
                out[op : op + ln] = (chunk * reps)[:ln]
            op += ln
    if op != out_len:
        raise ValueError(f"LZF data decompressed to {op} bytes, header says {out_len}")
    return bytes(out)
