"""Writes the label cache fuzz corpus (fuzz/corpus/label_cache/*): caches in
core/data/label_cache.c's format ("YOLOLC03"), key 0x0123456789abcdef, each
prefixed with the fuzz target's mode byte. Run from fuzz/corpus/."""
import struct

KEY = 0x0123456789abcdef
MASK = (1 << 64) - 1


def fnv1a(data):
    h = 0xcbf29ce484222325
    for b in data:
        h = ((h ^ b) * 0x100000001b3) & MASK
    return h


def i64(v):
    return struct.pack('<q', v)


def string(s):
    return i64(len(s)) + s.encode()


def sample(path, w, h, image_class, cls=(), boxes=(), polys=None, kpts=None):
    out = string(path) + struct.pack('<4i', w, h, image_class, len(cls))
    if not cls:
        return out
    out += struct.pack('<%di' % len(cls), *cls) + struct.pack('<%df' % (4 * len(cls)), *[v for b in boxes for v in b])
    out += struct.pack('<i', 1 if polys is not None else 0)
    if polys is not None:
        starts = [0]
        for p in polys:
            starts.append(starts[-1] + len(p) // 2)
        out += struct.pack('<%di' % len(starts), *starts)
        flat = [v for p in polys for v in p]
        out += struct.pack('<%df' % len(flat), *flat)
    if kpts is not None:
        out += struct.pack('<%df' % len(kpts), *kpts)
    return out


def cache(samples, kc, kd, warnings=(), corrupt=0, repaired=0):
    instances = sum(s[1] for s in samples)
    backgrounds = sum(1 for s in samples if s[1] == 0)
    body = b'YOLOLC03' + struct.pack('<Q', KEY) + i64(len(samples))
    body += struct.pack('<5q', len(samples), backgrounds, corrupt, repaired, instances) + i64(kc) + i64(kd)
    body += b''.join(s[0] for s in samples) + i64(len(warnings)) + b''.join(string(w) for w in warnings)
    return body + struct.pack('<Q', fnv1a(body))


def write(name, mode, data):
    with open('label_cache/' + name, 'wb') as f:
        f.write(bytes([mode]) + data)


box = (0.5, 0.5, 0.25, 0.5)
detect = cache([(sample('images/a.jpg', 640, 480, -1, [0, 79], [box, (0.1, 0.2, 0.1, 0.2)]), 2),
                (sample('images/b.jpg', 32, 32, -1), 0)], 0, 0, ['images/c.jpg: not an image'], corrupt=1)
write('detect', 0, detect)
segment = cache([(sample('images/a.png', 64, 48, -1, [3, 1], [box, box],
                         polys=[[0.1, 0.1, 0.9, 0.1, 0.5, 0.9], [0.2, 0.2, 0.3, 0.2, 0.3, 0.3, 0.2, 0.3]]), 2)], 0, 0,
                repaired=1, warnings=['labels/a.txt: line 2: duplicate row removed'])
write('segment', 0, segment)
pose = cache([(sample('images/p.jpg', 100, 200, -1, [0], [box],
                      kpts=[0.5 if i % 3 < 2 else 2.0 for i in range(51)]), 1)], 17, 3)
write('pose', 2, pose)
pose2 = cache([(sample('images/q.jpg', 10, 20, -1, [2, 0], [box, box], kpts=[0.25] * 16), 2)], 4, 2)
write('pose2', 4, pose2)
classify = cache([(sample('train/cat/1.jpg', 32, 32, 0), 0), (sample('train/dog/2.jpg', 32, 32, 1), 0)], 0, 0)
write('classify', 6, classify)
write('old_format', 0, b'YOLOLC02' + detect[8:])
