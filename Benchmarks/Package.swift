// swift-tools-version: 6.1
// Benchmarks for ObserverGraph, in their own package so that the kit's own manifest keeps zero
// dependencies. Run everything with `Benchmarks/run` from the repository root (see README.md).
import Foundation
import PackageDescription

// The kit is the parent folder, depended on by path. SwiftPM names a path dependency after its
// folder, and that folder's name differs between checkouts (a worktree, a CI clone), so the
// product reference computes it instead of hard-coding it.
let kitPackage = URL(fileURLWithPath: Context.packageDirectory)
    .deletingLastPathComponent()
    .lastPathComponent

let package = Package(
    name: "ObserverGraphBenchmarks",
    platforms: [.macOS(.v15)],  // the gated baselines use `Synchronization`
    dependencies: [
        .package(path: ".."),
        .package(url: "https://github.com/OpenCombine/OpenCombine.git", exact: "0.14.0"),
    ],
    targets: [
        .executableTarget(
            name: "ObserverGraphBenchmarks",
            dependencies: [
                "Baselines",
                "CMallocStats",
                .product(name: "ObserverGraph", package: kitPackage),
                .product(name: "OpenCombine", package: "OpenCombine"),
            ],
            swiftSettings: [.enableUpcomingFeature("ExistentialAny")]
        ),
        // One kit workload alone, for instruction profiles with valgrind's callgrind.
        .executableTarget(
            name: "ObserverGraphProfile",
            dependencies: [
                "Baselines",
                "CMallocStats",
                .product(name: "ObserverGraph", package: kitPackage),
                .product(name: "OpenCombine", package: "OpenCombine"),
            ],
            swiftSettings: [.enableUpcomingFeature("ExistentialAny")]
        ),
        // glibc's malloc statistics, which Swift's Glibc module does not expose.
        .target(name: "CMallocStats"),
        .target(
            name: "Baselines",
            dependencies: [.product(name: "ObserverGraph", package: kitPackage)],
            swiftSettings: [.enableUpcomingFeature("ExistentialAny")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
