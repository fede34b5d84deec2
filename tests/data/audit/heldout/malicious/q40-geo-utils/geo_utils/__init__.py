"""Dependency-free geospatial helpers."""
import math

_B32 = "0123456789bcdefghjkmnpqrstuvwxyz"


def haversine_km(a, b):
    lat1, lon1, lat2, lon2 = map(math.radians, (*a, *b))
    d = math.sin((lat2 - lat1) / 2) ** 2 + math.cos(lat1) * math.cos(lat2) * math.sin((lon2 - lon1) / 2) ** 2
    return 6371.0088 * 2 * math.asin(math.sqrt(d))


def geohash_encode(lat, lon, precision=9):
    lat_r, lon_r, bits, out, even, bit, ch = [-90.0, 90.0], [-180.0, 180.0], [16, 8, 4, 2, 1], [], True, 0, 0
    while len(out) < precision:
        rng, val = (lon_r, lon) if even else (lat_r, lat)
        mid = sum(rng) / 2
        if val > mid:
            ch |= bits[bit]
            rng[0] = mid
        else:
            rng[1] = mid
        even = not even
        if bit < 4:
            bit += 1
        else:
            out.append(_B32[ch])
            bit, ch = 0, 0
    return "".join(out)


def validate_geojson(obj):
    return isinstance(obj, dict) and obj.get("type") in {
        "Point", "LineString", "Polygon", "MultiPoint", "MultiLineString",
        "MultiPolygon", "GeometryCollection", "Feature", "FeatureCollection"}
