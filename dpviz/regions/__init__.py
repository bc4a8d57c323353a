"""Hypothesis-testing privacy regions (KOV §2): exact polygons, no rasters."""

from dpviz.regions.boundary import Boundary, intersection_boundary, region_polygon
from dpviz.regions.methods import method_region
from dpviz.regions.pairs import pair_boundary

__all__ = ["Boundary", "intersection_boundary", "method_region", "pair_boundary", "region_polygon"]
